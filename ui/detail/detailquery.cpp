#include "ui/detail/detailquery.h"

#include <QObject>

#include "core/explain/explain.h"
#include "core/explain/format.h"
#include "core/explain/loader.h"
#include "ui/common/outcomestyle.h"
#include "ui/common/timefmt.h"

namespace idem::ui {
namespace {

QString str(const pg::Result& r, int row, const char* name) {
  return QString::fromUtf8(r.text(row, r.column(name)));
}
QDateTime timeAt(const pg::Result& r, int row, const char* name) { return fromEpochText(r.text(row, r.column(name))); }
int integer(const pg::Result& r, int row, const char* name) {
  return r.isNull(row, r.column(name)) ? 0 : static_cast<int>(r.integer(row, name));
}

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
  const std::vector<pg::Param> key{ref.tenant.toStdString(), ref.endpoint.toStdString(), ref.key.toStdString()};
  // Live generation and archived ones: both by their primary key.
  auto g = conn.exec(R"sql(
    SELECT generation, true AS live, tier, policy_version, encode(fingerprint, 'hex') AS fp, state,
           extract(epoch FROM lease_until)::text AS lease_until, resp_status, resp_headers::text AS headers,
           resp_body, resource_ref, request_id, extract(epoch FROM created_at)::text AS created,
           extract(epoch FROM completed_at)::text AS completed, extract(epoch FROM expires_at)::text AS expires,
           NULL::text AS archived_at, NULL::text AS archived_by, NULL::text AS purge_after,
           NULL::text AS body_dropped_at
      FROM idem.keys WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3
    UNION ALL
    SELECT generation, false, tier, policy_version, encode(fingerprint, 'hex'), state, NULL, resp_status,
           resp_headers::text, resp_body, resource_ref, request_id, extract(epoch FROM created_at)::text,
           extract(epoch FROM completed_at)::text, extract(epoch FROM expires_at)::text,
           extract(epoch FROM archived_at)::text, archived_by, extract(epoch FROM purge_after)::text,
           extract(epoch FROM body_dropped_at)::text
      FROM idem.key_archive WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3
     ORDER BY generation)sql",
                     key);
  for (int i = 0; i < g.rows(); ++i) {
    Generation gen;
    gen.generation = integer(g, i, "generation");
    gen.live = g.boolean(i, "live");
    gen.tier = str(g, i, "tier");
    gen.policyVersion = integer(g, i, "policy_version");
    gen.fingerprintHex = str(g, i, "fp");
    gen.state = str(g, i, "state");
    gen.leaseUntil = timeAt(g, i, "lease_until");
    gen.status = integer(g, i, "resp_status");
    gen.headersJson = str(g, i, "headers");
    const std::string body = g.bytes(i, "resp_body");
    gen.body = QByteArray(body.data(), static_cast<qsizetype>(body.size()));
    gen.resourceRef = str(g, i, "resource_ref");
    gen.requestId = str(g, i, "request_id");
    gen.created = timeAt(g, i, "created");
    gen.completed = timeAt(g, i, "completed");
    gen.expires = timeAt(g, i, "expires");
    gen.archivedAt = timeAt(g, i, "archived_at");
    gen.archivedBy = str(g, i, "archived_by");
    gen.purgeAfter = timeAt(g, i, "purge_after");
    gen.bodyDroppedAt = timeAt(g, i, "body_dropped_at");
    d.generations.push_back(std::move(gen));
  }
  // The hash index on idem_key finds the key's events (few per key); they are sorted here.
  auto e = conn.exec(R"sql(
    SELECT id, extract(epoch FROM at)::text AS at, generation, outcome, encode(fingerprint, 'hex') AS fp, status,
           latency_ms, request_id, detail
      FROM idem.events WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3
     ORDER BY at, id
     LIMIT $4)sql",
                     {key[0], key[1], key[2], kMaxTraceEvents + 1});
  for (int i = 0; i < e.rows() && i < kMaxTraceEvents; ++i) {
    KeyEvent ev;
    ev.id = e.integer(i, "id");
    ev.at = timeAt(e, i, "at");
    ev.generation = integer(e, i, "generation");
    ev.outcome = str(e, i, "outcome");
    ev.fingerprintHex = str(e, i, "fp");
    ev.status = integer(e, i, "status");
    ev.latencyMs = e.isNull(i, e.column("latency_ms")) ? -1.0 : e.real(i, "latency_ms");
    ev.requestId = str(e, i, "request_id");
    ev.detail = str(e, i, "detail");
    d.events.push_back(std::move(ev));
  }
  d.eventsTruncated = e.rows() > kMaxTraceEvents;
  // The narrative is core's (the same text `idemctl explain` prints): its loader reads the
  // key again with the policy in force per generation, which the tabs above do not need.
  try {
    explain::KeyRef target{explain::Scope{ref.tenant.toStdString(), ref.endpoint.toStdString()}, ref.key.toStdString()};
    explain::KeyHistory history = explain::loadHistory(conn, target);
    if (history.generations.empty() && history.events.empty()) {
      d.explainError = QObject::tr("nothing is stored for this key.");
    } else {
      const explain::Explanation x = explain::explain(std::move(history));
      d.narrative = QString::fromStdString(x.narrative);
      // Laying out a long Markdown timeline blocks the GUI thread for seconds (measured: ~8 s
      // for 1 000 events); the Trace tab lists every event.
      d.markdown = QString::fromStdString(explain::toMarkdown(x, kMaxExplainedEvents));
      d.explainedExecutions = x.executions;
    }
  } catch (const pg::QueryError& failure) {
    d.explainError = QObject::tr("the explanation could not be computed: %1").arg(QString::fromUtf8(failure.what()));
  }
  d.serverNow = timeAt(conn.exec("SELECT extract(epoch FROM now())::text AS now"), 0, "now");
  return d;
}

}  // namespace idem::ui
