#pragma once
// The enforcement host that `serve` and `proxy` share: the store pool, key store, trace writer
// and enforcer over the policy in force (a snapshot a reload may swap: enforce/policysnapshot.h),
// the pages every front answers (/idempotency, /healthz, /metrics) and tenant vetting. Not a Handler itself: serve's demo API (service.h) and the
// proxy's forwarder (core/proxy) answer through it, on the transport of core/server.
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "core/gate/metrics.h"
#include "core/enforce/enforcer.h"
#include "core/policy/policy.h"
#include "core/server/handler.h"
#include <boost/asio/io_context.hpp>

#include "core/store/asynckeybatches.h"
#include "core/store/keystore.h"
#include "core/store/pool.h"
#include "core/store/replaybodies.h"
#include "core/trace/tracewriter.h"

namespace idem::gate {

struct HostOptions {
  int poolSize = 16;
  std::chrono::milliseconds traceFlushInterval{100};
  std::size_t traceFoldAfter = 3;             // see ServerOptions
  bool preparedStatements = true;             // see ServerOptions
  enforce::ReplayCacheOptions replayCache{};  // see ServerOptions
  std::string service = store::kDefaultService;  // whose keys, trace and policy (servicename.h)
  /// Replay bodies in flight (store/replaybodies.h); maxLargeReads 0: a quarter of the pool.
  store::ReplayBodyOptions replayBodies{std::size_t{64} << 20, 0};
  /// Retries that may wait for their key's original under `on_conflict: "wait:…"` (ConflictWaits).
  enforce::ConflictWaitBounds conflictWaits{};
  store::WriteBatching writeBatching{};  // see ServerOptions
};

class Host {
 public:
  /// `policy.docsUrl` should already point at this server's /idempotency page.
  Host(std::string conninfo, policy::Policy policy, int policyVersion, HostOptions options);
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;
  ~Host();

  [[nodiscard]] Metrics& metrics() { return m_metrics; }
  [[nodiscard]] Gauges gauges() const;
  /// The policy in force: a request takes it once, at its start, and keeps it to its end.
  [[nodiscard]] enforce::PolicyPtr policy() const { return m_enforcer.policy(); }
  /// Swaps the policy in force for the requests that start from now on (a reload; the
  /// snapshot's version is recorded in the store already).
  void replacePolicy(enforce::PolicyPtr next) { m_enforcer.replacePolicy(std::move(next)); }
  [[nodiscard]] const std::string& service() const { return m_options.service; }
  [[nodiscard]] store::Pool& pool() { return m_pool; }
  /// Writes the queued trace events (shutdown, tests, the demo's backdating).
  bool flushTrace() { return m_trace.flush(); }
  [[nodiscard]] enforce::Enforcer& enforcer() { return m_enforcer; }
  /// New keys' claims and completions go to the store without a thread waiting on them, on a
  /// loop of the host's own (store/asynckeybatches.h), for an execution that runs on the event
  /// loop (the proxy): the gate then decides and settles such keys without a handler thread.
  /// Call it before the first request. Its connections: up to storeConnectionsWithoutWaiting().
  void writeWithoutWaiting();
  static constexpr int kStoreConnectionsWithoutWaiting = 2 * static_cast<int>(store::kWriteBatchesInFlight);
  [[nodiscard]] const enforce::Enforcer& enforcer() const { return m_enforcer; }

  [[nodiscard]] server::Handled publishedPolicy(const server::Request& request) const;
  /// The front's `on_takeover` where a tier names none (Execution::takeoverDefault); set once,
  /// before the first request. The published policy and the gate both resolve tiers with it.
  void setTakeoverDefault(policy::OnTakeover rule) { m_takeoverDefault = rule; }
  [[nodiscard]] policy::OnTakeover onTakeover(const policy::Tier& tier) const {
    return tier.onTakeover == policy::OnTakeover::FrontDecides ? m_takeoverDefault : tier.onTakeover;
  }
  [[nodiscard]] server::Handled health(const std::string& requestId);
  [[nodiscard]] server::Handled metricsPage();

  /// The tenant header's value under `policy` (the request's snapshot); nullopt when absent
  /// (tenantProblem() has vetted it).
  [[nodiscard]] static std::optional<std::string> tenantHeaderValue(const policy::Policy& policy,
                                                                    const http::Headers& headers);
  /// The tenant a request's data belongs to: the header's, or the policy's default.
  [[nodiscard]] static std::string tenantOf(const policy::Policy& policy, const http::Headers& headers);
  /// 400 when the tenant header is repeated or malformed, or missing on a route that reads or
  /// writes a tenant's data (`needed`) while the policy requires one.
  [[nodiscard]] static std::optional<enforce::Response> tenantProblem(const policy::Policy& policy,
                                                                      const http::Headers& headers, bool needed);

  /// Counts a request as in flight (/healthz, /metrics) while it lives.
  class InFlight {
   public:
    explicit InFlight(Host& h) : m_n(h.m_inFlight) { ++m_n; }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    ~InFlight() { --m_n; }

   private:
    std::atomic<int>& m_n;
  };

 private:
  HostOptions m_options;
  policy::OnTakeover m_takeoverDefault = policy::OnTakeover::Execute;
  store::Pool m_pool;
  store::ReplayBodies m_replayBodies;  // before the key store, which reads under it
  store::KeyStore m_store;
  trace::TraceWriter m_trace;
  enforce::Enforcer m_enforcer;
  Metrics m_metrics;
  std::atomic<int> m_inFlight{0};
  std::string m_conninfo;
  // writeWithoutWaiting(): the loop the statements are sent and answered on, and its thread.
  std::unique_ptr<boost::asio::io_context> m_storeLoop;
  std::unique_ptr<store::AsyncKeyBatches> m_writesWithoutWaiting;
  std::jthread m_storeLoopThread;
  std::jthread m_poolWarmer;  // last: stopped and joined before the pool goes
};

}  // namespace idem::gate
