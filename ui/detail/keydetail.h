#pragma once
// Everything the detail tabs show about one key: every generation (live and archived) and
// every event. Plain values built on the worker thread and handed to the GUI thread.
#include <QByteArray>
#include <QDateTime>
#include <QString>
#include <vector>

namespace idem::ui {

/// Identifies a key: its scope (tenant + endpoint) and the key itself.
struct KeyRef {
  QString tenant;
  QString endpoint;
  QString key;
  [[nodiscard]] bool isValid() const { return !key.isEmpty(); }
  bool operator==(const KeyRef&) const = default;
};

struct Generation {
  int generation = 0;
  bool live = false;
  QString tier;
  int policyVersion = 0;
  QString fingerprintHex;
  QString state;
  QDateTime leaseUntil;
  int status = 0;
  QString headersJson;   ///< resp_headers as the server printed the jsonb
  QByteArray body;       ///< resp_body; empty when none or dropped
  QString resourceRef;
  QString requestId;
  QDateTime created;
  QDateTime completed;
  QDateTime expires;
  QDateTime archivedAt;
  QString archivedBy;
  QDateTime purgeAfter;
  QDateTime bodyDroppedAt;
};

struct KeyEvent {
  qint64 id = 0;
  QDateTime at;
  int generation = 0;    ///< 0 when the event has none
  QString outcome;
  QString fingerprintHex;
  int status = 0;
  double latencyMs = -1;
  QString requestId;
  QString detail;
  int repeats = 1;   ///< > 1: a folded retry storm, this many identical decisions from `at` to `lastAt`
  QDateTime lastAt;  ///< the last of a folded storm's decisions; invalid otherwise
};

struct KeyDetail {
  KeyRef ref;
  std::vector<Generation> generations;  ///< oldest first
  std::vector<KeyEvent> events;         ///< by time
  bool eventsTruncated = false;
  QDateTime serverNow;
  QString narrative;        ///< core's plain-language explanation (core/explain)
  QString markdown;         ///< core's Markdown report for a ticket
  QString explainError;     ///< why there is no explanation, when there is none
  int explainedExecutions = -1;  ///< core's count (includes executions whose events are gone)
  [[nodiscard]] int executions() const;
  [[nodiscard]] const Generation* live() const;
};

}  // namespace idem::ui
