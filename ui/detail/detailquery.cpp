#include "ui/detail/detailquery.h"

#include <QObject>

#include "core/explain/explain.h"
#include "core/explain/format.h"
#include "core/explain/loader.h"
#include "ui/common/outcomestyle.h"

namespace idem::ui {
namespace {

QDateTime dateTime(explain::Instant t) { return QDateTime::fromMSecsSinceEpoch(t.micros / 1000, Qt::UTC); }
QDateTime dateTime(const std::optional<explain::Instant>& t) { return t ? dateTime(*t) : QDateTime(); }

}  // namespace

int KeyDetail::executions() const {
  int n = 0;
  for (const auto& e : events)
    if (isExecution(e.outcome)) ++n;
  return n;
}

const Generation* KeyDetail::live() const {
  for (const auto& g : generations)
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
  explain::KeyHistory history = explain::loadHistory(conn, target, explain::LoadOptions{true});
  d.serverNow = dateTime(history.observedAt);
  for (const auto& g : history.generations) {
    Generation gen;
    gen.generation = g.number;
    gen.live = g.live;
    gen.tier = QString::fromStdString(g.tier);
    gen.policyVersion = g.policyVersion.value_or(0);
    gen.fingerprintHex = QString::fromStdString(g.fingerprintHex);
    gen.state = QString::fromStdString(g.state);
    gen.leaseUntil = dateTime(g.leaseUntil);
    gen.status = g.status.value_or(0);
    gen.headersJson = QString::fromStdString(g.headersJson);
    gen.body = QByteArray(g.body.data(), static_cast<qsizetype>(g.body.size()));
    gen.resourceRef = QString::fromStdString(g.resourceRef.value_or(""));
    gen.requestId = QString::fromStdString(g.requestId.value_or(""));
    gen.created = dateTime(g.createdAt);
    gen.completed = dateTime(g.completedAt);
    gen.expires = dateTime(g.expiresAt);
    gen.archivedAt = dateTime(g.archivedAt);
    gen.archivedBy = QString::fromStdString(g.archivedBy);
    gen.purgeAfter = dateTime(g.purgeAfter);
    gen.bodyDroppedAt = dateTime(g.bodyDroppedAt);
    d.generations.push_back(std::move(gen));
  }
  for (const auto& e : history.events) {
    if (d.events.size() == static_cast<std::size_t>(kMaxTraceEvents)) {
      d.eventsTruncated = true;
      break;
    }
    KeyEvent ev;
    ev.id = e.id;
    ev.at = dateTime(e.at);
    ev.generation = e.generation.value_or(0);
    ev.outcome = QString::fromStdString(e.outcome);
    ev.fingerprintHex = QString::fromStdString(e.fingerprintHex);
    ev.status = e.status.value_or(0);
    ev.latencyMs = e.latencyMs.value_or(-1.0);
    ev.requestId = QString::fromStdString(e.requestId.value_or(""));
    ev.detail = QString::fromStdString(e.detail.value_or(""));
    ev.repeats = e.repeats;
    if (e.lastAt) ev.lastAt = dateTime(*e.lastAt);
    d.events.push_back(std::move(ev));
  }
  if (history.generations.empty() && history.events.empty()) {
    d.explainError = QObject::tr("nothing is stored for this key.");
    return d;
  }
  const explain::Explanation x = explain::explain(std::move(history));
  d.narrative = QString::fromStdString(x.narrative);
  // Laying out a long Markdown timeline blocks the GUI thread for seconds (measured: ~8 s for
  // 1 000 events); the Trace tab lists every event.
  d.markdown = QString::fromStdString(explain::toMarkdown(x, kMaxExplainedEvents));
  d.explainedExecutions = x.executions;
  return d;
}

}  // namespace idem::ui
