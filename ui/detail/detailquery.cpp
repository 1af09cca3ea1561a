#include "ui/detail/detailquery.h"

#include <QObject>

#include "core/explain/format.h"
#include "core/explain/loader.h"

namespace idem::ui {

QDateTime toDateTime(explain::Instant t) { return QDateTime::fromMSecsSinceEpoch(t.micros / 1000, Qt::UTC); }
QDateTime toDateTime(const std::optional<explain::Instant>& t) { return t ? toDateTime(*t) : QDateTime(); }

QDateTime KeyDetail::serverNow() const {
  return ref.isValid() ? toDateTime(explanation.history.observedAt) : QDateTime();
}

const explain::Generation* KeyDetail::live() const {
  for (const auto& g : generations())
    if (g.live) return &g;
  return nullptr;
}

KeyDetail loadKeyDetail(pg::Connection& conn, const KeyRef& ref) {
  KeyDetail d;
  d.ref = ref;
  // One read of the key, core's (the same `idemctl explain` uses), in one snapshot: the tabs
  // and the narrative cannot disagree.
  const explain::KeyRef target{explain::Scope{ref.tenant.toStdString(), ref.endpoint.toStdString()},
                               ref.key.toStdString()};
  d.explanation = explain::explain(explain::loadHistory(conn, target, explain::LoadOptions{true}));
  if (d.generations().empty() && d.events().empty()) {
    d.explainError = QObject::tr("nothing is stored for this key.");
    return d;
  }
  // Laying out a long Markdown timeline blocks the GUI thread for seconds (measured: ~8 s for
  // 1 000 events); the Trace tab lists every event.
  d.markdown = QString::fromStdString(explain::toMarkdown(d.explanation, kMaxExplainedEvents));
  d.customerMarkdown = QString::fromStdString(
      explain::toMarkdown(d.explanation, kMaxExplainedEvents, explain::Audience::Customer));
  // The summary and the report counted every event; the tabs list the first kMaxTraceEvents.
  auto& events = d.explanation.history.events;
  if (events.size() > static_cast<std::size_t>(kMaxTraceEvents)) {
    events.resize(static_cast<std::size_t>(kMaxTraceEvents));
    d.eventsTruncated = true;
  }
  return d;
}

}  // namespace idem::ui
