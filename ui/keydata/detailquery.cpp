#include "ui/keydata/detailquery.h"

#include <QObject>

#include "core/explain/format.h"
#include "core/explain/loader.h"

namespace idem::ui {

namespace {

// Core's explanation of history and its two documents, then the events cut to what the tabs
// list (the summary and the documents counted every one).
void explainHistory(KeyDetail& d, explain::KeyHistory history, const text::TimeZone& zone) {
  d.explanation = explain::explain(std::move(history), explain::ExplainOptions{zone});
  d.markdown.clear();
  d.customerMarkdown.clear();
  d.eventsTruncated = false;
  d.fullHistory.reset();
  if (d.generations().empty() && d.events().empty()) {
    d.explainError = QObject::tr("nothing is stored for this key.");
    return;
  }
  // Laying out a long Markdown timeline blocks the GUI thread for seconds (measured: ~8 s for
  // 1 000 events); the Trace tab lists every event.
  d.markdown = QString::fromStdString(explain::toMarkdown(d.explanation, kMaxExplainedEvents));
  d.customerMarkdown = QString::fromStdString(
      explain::toMarkdown(d.explanation, kMaxExplainedEvents, explain::Audience::Customer));
  auto& events = d.explanation.history.events;
  if (events.size() > static_cast<std::size_t>(kMaxTraceEvents)) {
    d.fullHistory = std::make_shared<const explain::KeyHistory>(d.explanation.history);
    events.resize(static_cast<std::size_t>(kMaxTraceEvents));
    d.eventsTruncated = true;
  }
}

}  // namespace

KeyDetail loadKeyDetail(pg::Connection& conn, const KeyRef& ref, const text::TimeZone& zone) {
  KeyDetail d;
  d.ref = ref;
  // One read of the key, core's (the same `idemctl explain` uses), in one snapshot: the tabs
  // and the narrative cannot disagree.
  const explain::KeyRef target{
      explain::Scope{ref.tenant.toStdString(), ref.endpoint.toStdString(), ref.service.toStdString()},
      ref.key.toStdString()};
  explainHistory(d, explain::loadHistory(conn, target, explain::LoadOptions{true}), zone);
  return d;
}

SharedKeyDetail explainedInZone(SharedKeyDetail detail, const text::TimeZone& zone) {
  if (!detail->ref.isValid() || detail->explanation.zone.name() == zone.name()) return detail;
  auto again = std::make_shared<KeyDetail>(*detail);
  explain::KeyHistory history = detail->fullHistory ? *detail->fullHistory : detail->explanation.history;
  explainHistory(*again, std::move(history), zone);
  return again;
}

}  // namespace idem::ui
