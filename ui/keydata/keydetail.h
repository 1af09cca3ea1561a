#pragma once
// Everything the detail tabs show about one key: core's explanation of it (its generations,
// its events and core's summary, the same `idemctl explain` prints), read on the worker
// thread and handed to the GUI thread. The tabs read core's types as they are: no copy to
// drift from them, no second count of executions.
#include <QDateTime>
#include <QString>
#include <memory>

#include "core/explain/explain.h"

namespace idem::ui {

/// Identifies a key: its scope (tenant + endpoint) and the key itself.
struct KeyRef {
  QString tenant;
  QString endpoint;
  QString key;
  QString service = QStringLiteral("default");  ///< whose key, when services share the store
  [[nodiscard]] bool isValid() const { return !key.isEmpty(); }
  bool operator==(const KeyRef&) const = default;
};

struct KeyDetail {
  KeyRef ref;
  /// Core's explanation: history() is what the store holds, `executions` and `generations`
  /// (parallel to history().generations) its summary by core's rules.
  explain::Explanation explanation;
  bool eventsTruncated = false;  ///< history().events holds the first kMaxTraceEvents only
  /// Every event read, kept only when history().events was cut: explaining the key again in
  /// another zone must count what the first explanation counted.
  std::shared_ptr<const explain::KeyHistory> fullHistory;
  QString markdown;              ///< core's Markdown report for a ticket
  QString customerMarkdown;      ///< core's explanation for the customer: no key, lease or generation
                                 ///< (both with their times in explanation.zone)
  QString explainError;          ///< why there is no explanation, when there is none

  [[nodiscard]] const explain::KeyHistory& history() const { return explanation.history; }
  [[nodiscard]] const std::vector<explain::Generation>& generations() const { return explanation.history.generations; }
  [[nodiscard]] const std::vector<explain::Event>& events() const { return explanation.history.events; }
  /// How many times the operation ran, by core's rule (a done generation ran at least once).
  [[nodiscard]] int executions() const { return explanation.executions; }
  /// " (1 with no answer from the service)" to follow the execution count, or empty when the
  /// service answered every execution: the one wording of the header, trace and report.
  [[nodiscard]] QString unansweredNote() const;
  [[nodiscard]] QString narrative() const { return QString::fromStdString(explanation.narrative); }
  [[nodiscard]] QDateTime serverNow() const;
  [[nodiscard]] const explain::Generation* live() const;
};

/// One loaded key's detail, shared by the views that show it (the detail pane, Response,
/// Generations, Trace, Explain): set once per load, never copied per view. Never null: no key
/// open is noKeyDetail().
using SharedKeyDetail = std::shared_ptr<const KeyDetail>;
/// The empty detail (no key open), one instance for every view.
[[nodiscard]] const SharedKeyDetail& noKeyDetail();

/// A stored instant as a QDateTime (UTC, millisecond precision).
[[nodiscard]] QDateTime toDateTime(explain::Instant t);
/// Invalid when absent.
[[nodiscard]] QDateTime toDateTime(const std::optional<explain::Instant>& t);

}  // namespace idem::ui
