#include "core/gate/host.h"

#include <algorithm>
#include <iostream>
#include <boost/asio/executor_work_guard.hpp>

#include "core/gate/durabilityreport.h"
#include "core/gate/jsonresponse.h"
#include "core/policy/tenantsource.h"
#include "core/server/accesslog.h"
#include "core/text/json_text.h"

namespace idem::gate {

using nlohmann::json;

enforce::Response jsonResponse(int status, const json& body) {
  enforce::Response r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = text::dumpJson(body);  // an echo or a list may carry client bytes
  return r;
}

namespace {
// Unless set, a quarter of the store connections may read large stored bodies at once: the
// rest stay free for every other request (issue 28 #10: big replays took all of them).
store::ReplayBodyOptions withLargeReads(store::ReplayBodyOptions o, int poolSize) {
  if (o.maxLargeReads <= 0) o.maxLargeReads = std::max(1, poolSize / 4);
  return o;
}
}  // namespace

Host::Host(std::string conninfo, policy::Policy policy, int policyVersion, HostOptions options)
    : m_options(std::move(options)),
      m_pool(conninfo, m_options.poolSize),
      m_replayBodies(withLargeReads(m_options.replayBodies, m_options.poolSize)),
      m_store(m_pool, store::RecentKeys::shared(), m_options.writeBatching),
      m_trace(m_pool,
              trace::TraceWriter::Options{m_options.traceFlushInterval, 1000, 100000, true, m_options.traceFoldAfter,
                                          m_options.service}),
      m_enforcer(enforce::makeSnapshot(std::move(policy), policyVersion), m_store, m_trace) {
  if (!m_options.preparedStatements) m_pool.setPreparedStatements(false);
  m_enforcer.setReplayCache(m_options.replayCache);
  m_enforcer.setConflictWaitBounds(m_options.conflictWaits);
  m_store.setReplayBodies(&m_replayBodies);
  m_conninfo = std::move(conninfo);
  // In the background: a start must not wait for the store (it may be down; requests then get 503).
  m_poolWarmer = std::jthread([this](const std::stop_token& stop) { m_pool.warmUp(m_options.poolSize, stop); });
}

Host::~Host() {
  if (!m_storeLoop) return;
  // Before the store and the enforcer its callbacks reach go: what still waits is answered
  // (Unavailable; a stopped server has nothing in flight), then the loop ends.
  m_writesWithoutWaiting->stop();
  m_storeLoop->stop();
  if (m_storeLoopThread.joinable()) m_storeLoopThread.join();
  m_store.setWritesWithoutWaiting(nullptr);
}

void Host::writeWithoutWaiting() {
  if (m_storeLoop) return;
  m_storeLoop = std::make_unique<boost::asio::io_context>(1);
  m_writesWithoutWaiting =
      std::make_unique<store::AsyncKeyBatches>(m_storeLoop->get_executor(), m_conninfo, m_options.writeBatching);
  m_store.setWritesWithoutWaiting(m_writesWithoutWaiting.get());
  m_storeLoopThread = std::jthread([loop = m_storeLoop.get()] {
    auto busy = boost::asio::make_work_guard(*loop);  // idle between requests, until the host goes
    // A callback that throws is a bug, but it must not end the process with every request that
    // waits on this loop: said on stderr, and the loop goes on.
    for (;;) try {
        loop->run();
        return;
      } catch (const std::exception& e) {
        std::cerr << "idem: the store's loop caught an exception from a callback: " << e.what() << std::endl;
      }
  });
}

Gauges Host::gauges() const {
  Gauges g;
  g.pool = m_pool.stats();
  g.traceQueued = m_trace.queued();
  g.traceWritten = m_trace.written();
  g.traceDropped = m_trace.dropped();
  g.traceRefused = m_trace.refused();
  g.traceRepaired = m_trace.repaired();
  g.claims = m_store.claims();
  g.claimStatements = m_store.claimRoundTrips();
  g.writeBatches = m_store.writeBatches();
  g.readUnseenFirst = m_store.readsUnseenKeysFirst();
  g.leasesRenewed = m_enforcer.leases().renewals();
  g.leaseRenewalFailures = m_enforcer.leases().failures();
  g.completionBacklog = static_cast<long long>(m_enforcer.backlog().size());
  g.completionsStoredLate = m_enforcer.backlog().storedLate();
  g.inFlight = m_inFlight.load();
  g.replayCache = m_enforcer.replays().stats();
  g.replayBodies = m_replayBodies.stats();
  g.conflictWaiters = m_enforcer.conflictWaits().waiting();
  g.conflictWaitsRefused = m_enforcer.conflictWaits().refused();
  g.policyVersion = m_enforcer.policy()->version;
  return g;
}

std::optional<std::string> Host::tenantHeaderValue(const policy::Policy& policy, const http::Headers& headers) {
  if (policy.tenantHeader.empty()) return std::nullopt;
  auto t = http::findHeader(headers, policy.tenantHeader);
  if (!t) return std::nullopt;
  // The credential never becomes the tenant: its digest does (stored, logged, traced).
  if (policy.tenantFromAuthorization) return policy::credentialTenant(*t);
  return std::string(*t);
}

std::string Host::tenantOf(const policy::Policy& policy, const http::Headers& headers) {
  return tenantHeaderValue(policy, headers).value_or(policy.defaultTenant);
}

std::optional<enforce::Response> Host::tenantProblem(const policy::Policy& policy, const http::Headers& headers,
                                                     bool needed) {
  if (policy.tenantHeader.empty()) return std::nullopt;
  const std::string& name = policy.tenantHeader;
  const std::string& docs = policy.docsUrl;
  // The gateway sets the tenant; a second copy means a client sent one too, and which of the
  // two a layer reads first is not ours to guess.
  if (http::countHeader(headers, name) > 1)
    return enforce::makeProblem(enforce::Problem::TenantMalformed, docs,
                                "Send exactly one " + name + " header; nothing was executed or stored.");
  const auto value = tenantHeaderValue(policy, headers);
  if (!value) {
    if (!needed || !policy.tenantRequired) return std::nullopt;
    return enforce::makeProblem(enforce::Problem::TenantMissing, docs,
                                "This route needs the " + name + " header; nothing was executed or stored.");
  }
  const bool visible = std::all_of(value->begin(), value->end(), [](char c) { return c > 0x20 && c < 0x7f; });
  if (value->empty() || value->size() > 128 || !visible)
    return enforce::makeProblem(enforce::Problem::TenantMalformed, docs,
                                name + " must be 1 to 128 visible ASCII characters; nothing was executed or stored.");
  return std::nullopt;
}

server::Handled Host::publishedPolicy(const server::Request& req) const {
  server::Handled h;
  h.outcome = "read";
  const auto accept = http::findHeader(req.headers, "Accept");
  const bool wantsJson =
      accept && accept->find("json") != std::string_view::npos && accept->find("text/html") == std::string_view::npos;
  const enforce::PolicyPtr inForce = policy();
  if (wantsJson) {
    auto published = policy::publishedJson(inForce->policy, m_takeoverDefault);
    published["policy_version"] = inForce->version;
    published["service"] = m_options.service;
    h.response = jsonResponse(200, published);
  } else {
    h.response.status = 200;
    h.response.headers.emplace_back("Content-Type", "text/html; charset=utf-8");
    h.response.body = policy::publishedHtml(inForce->policy, m_options.service, m_takeoverDefault);
  }
  h.response.headers.emplace_back("Vary", "Accept");
  return h;
}

server::Handled Host::health(const std::string& requestId) {
  server::Handled h;
  h.outcome = "health";
  // Whether the store takes writes, not only whether it answers: after a failover a server in
  // recovery, or one set default_transaction_read_only, answers every read and refuses every
  // claim. transaction_read_only is on in both cases.
  constexpr const char* kProbe =
      "SELECT coalesce(max(version), 0) AS v, pg_is_in_recovery() AS recovery, "
      "current_setting('transaction_read_only') = 'on' AS read_only FROM idem.schema_migrations";
  std::string store;  // empty: healthy
  json body;
  const enforce::PolicyPtr inForce = policy();
  try {
    auto r = m_pool.withRetry([&](pg::Connection& c) { return c.exec(kProbe); });
    const bool writable = !r.boolean(0, "recovery") && !r.boolean(0, "read_only");
    body = json{{"status", writable ? "ok" : "unavailable"},
                {"store", writable ? "ok" : "read_only"},
                {"writable", writable},
                {"schema_version", r.integer(0, "v")},
                {"service", m_options.service},
                {"policy_version", inForce->version},
                {"in_flight", m_inFlight.load()}};
    if (!writable) store = "read_only";
    // What an acknowledged key survives, and each tier's durability setting against it.
    const store::Durability durability = m_enforcer.durability().watch().refresh();
    body["durability"] = durabilityJson(durability, inForce->policy, m_enforcer.durability());
    if (auto warnings = durabilityWarnings(durability, inForce->policy); !warnings.empty())
      body["warnings"] = warnings;
  } catch (const pg::Unavailable& e) {
    server::logInternalError(requestId, "health check", e.what());
    store = "unreachable";
  } catch (const pg::QueryError& e) {
    server::logInternalError(requestId, "health check", e.what());
    store = "error";
  }
  if (store.empty()) {
    h.response = jsonResponse(200, body);
    return h;
  }
  if (body.is_null())
    body = json{{"status", "unavailable"}, {"store", store},           {"writable", false},
                {"service", m_options.service}, {"policy_version", inForce->version}};
  // Keyed requests cannot be served meanwhile; what failed is in the log under the request id.
  body["request_id"] = requestId;
  h.response = jsonResponse(503, body);
  h.response.headers.emplace_back("Retry-After", "2");
  h.outcome = "unavailable";
  return h;
}

server::Handled Host::metricsPage() {
  server::Handled h;
  h.outcome = "read";
  h.response.status = 200;
  h.response.headers.emplace_back("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
  h.response.body = m_metrics.render(gauges()) +
                    durabilityMetrics(m_enforcer.durability().watch().current(), policy()->policy,
                                      m_enforcer.durability());
  return h;
}

}  // namespace idem::gate
