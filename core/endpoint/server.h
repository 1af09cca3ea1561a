#pragma once
// The enforcement host on the HTTP transport (core/server): `idemctl serve`, `idemctl proxy`, the
// demo and the endpoint tests run it. Construction checks the store, records the policy and binds
// the ports; run() serves until stop(), then lets in-flight requests finish and flushes the trace.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/gate/execution.h"
#include "core/gate/host.h"
#include "core/policy/policy.h"
#include "core/server/rawroute.h"
#include "core/server/transport.h"

namespace idem::gate {
class Gate;
}

namespace idem::endpoint {

/// The transport's options (listen addresses, threads, limits, access log, admin listener) and
/// the enforcement host's.
struct ServerOptions : server::TransportOptions {
  std::string conninfo;
  /// Its docs_url is what clients see in problem types (`<docs_url>#<slug>`); empty: this
  /// server's own /idempotency page.
  policy::Policy policy;
  int poolSize = 16;      // store connections
  bool allowFaultInjection = false;
  std::chrono::milliseconds traceFlushInterval{100};
  /// Identical decisions on one key kept as trace rows per batch before the rest fold into one
  /// counted row (a retry storm); 0: one row per decision, always.
  std::size_t traceFoldAfter = 3;
  /// false: unnamed statements only, for a pooler in transaction mode that does not keep
  /// prepared statements (PgBouncer before 1.21); the pool also finds that out by itself.
  bool preparedStatements = true;
  /// Replays answered from memory (core/enforce/replaycache.h): a done key's answer is served
  /// without the store for at most 1 s after the store last replayed it, never past its expiry.
  enforce::ReplayCacheOptions replayCache{std::chrono::seconds(1)};
  /// Stored answers being replayed, bounded together (core/store/replaybodies.h): bytes from the
  /// store's read until written, and store connections reading large ones (0: a quarter of the pool).
  store::ReplayBodyOptions replayBodies{std::size_t{64} << 20, 0};
  /// Retries waiting for their key's original (`on_conflict: "wait:…"`), per key and in all;
  /// beyond either, a retry gets the ordinary 409 at once (core/enforce/conflictwaits.h).
  enforce::ConflictWaitBounds conflictWaits{};
  /// Write statements for new keys in flight at once (store/keystore.h): adapting by default.
  store::WriteBatching writeBatching{};
  /// An execution on the event loop (the proxy) writes new keys on statements no thread waits on
  /// (gate::Host::writeWithoutWaiting); false: on handler threads, as `serve` does.
  bool writesWithoutWaiting = true;
  /// Makes a raw route tried before the service on the main listener (serve's fault rig,
  /// core/faultrig), from the host's store pool and the published policy's URL; empty: none.
  std::function<std::unique_ptr<server::RawRoute>(store::Pool& pool, const std::string& docsUrl)> rawRoute;
  /// Makes what executes the requests the gate lets through (the proxy's upstream call); empty:
  /// serve's demo API (service.h). With one, /healthz and /metrics are on the admin listener
  /// only: the main listener passes every other path to the execution.
  std::function<std::unique_ptr<gate::Execution>(gate::Host&)> execution;
  /// The longest wait at start for the policy lock; past it the start fails naming its holder.
  std::chrono::milliseconds lockTimeout{10'000};
  /// The policy's tenant header is accepted only from these peers (CIDR ranges, or "any");
  /// empty: from any peer (core/gate/trustedpeers.h).
  std::vector<std::string> trustedPeers;
  /// Start although live keys were written under another tenant source (store/tenantscope.h).
  bool acceptTenantChange = false;
  /// Which service this server enforces for (core/store/servicename.h): its keys, trace rows and
  /// chosen policy are its own on a store that several services share.
  std::string service = store::kDefaultService;
};

using server::StartError;

/// What a reload of the policy did (Server::reloadPolicy).
struct PolicyReload {
  bool applied = false;
  int version = 0;       // the version in force afterwards (the new one when applied)
  std::string refusal;   // why it was refused; "" when applied
};

class Server {
 public:
  /// Checks the schema (migrated to this build's version), records the policy in the store and
  /// binds the port. Throws StartError with a message that says what to do.
  explicit Server(ServerOptions options);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  /// Stops and waits for a background run (start()).
  ~Server();

  [[nodiscard]] int port() const { return m_transport->port(); }
  [[nodiscard]] const ServerOptions& options() const { return m_options; }
  /// "http://127.0.0.1:PORT"
  [[nodiscard]] std::string url() const;
  /// The admin listener's port and URL; 0 and "" without one.
  [[nodiscard]] int adminPort() const { return m_transport->adminPort(); }
  [[nodiscard]] std::string adminUrl() const;
  /// The recorded version requests start under (a reload changes it).
  [[nodiscard]] int policyVersion() const { return m_policyVersion.load(); }
  /// The version the sweeper and the console follow (chosen by the operator); 0: none chosen.
  [[nodiscard]] int policyInForce() const { return m_policyInForce.load(); }

  /// Makes `next` the policy of the requests that start from now on (SIGHUP; docs/proxy.md,
  /// "Reloading"); requests in flight finish under theirs. It is recorded in the store first, as
  /// at start, so every key names the version that decided it. Refused, with the policy in force
  /// kept, when it would change where tenants come from (live keys would be re-scoped: a restart
  /// decides that, with --accept-tenant-change) or when the store cannot record it. Thread-safe.
  [[nodiscard]] PolicyReload reloadPolicy(policy::Policy next);

  /// Serves until stop(); returns once in-flight requests are answered and the trace is flushed.
  void run();
  /// run() on a background thread.
  void start();
  /// Asks run() to return. Thread-safe; callable before run() starts.
  void stop();
  /// Joins the background thread of start().
  void wait();

  /// The enforcement host: the policy, the store pool, the trace.
  [[nodiscard]] gate::Host& host() { return *m_host; }

 private:
  ServerOptions m_options;
  /// Records `p` for this service (as at start) and reads which version is chosen; its version.
  int recordPolicy(pg::Connection& conn, const policy::Policy& p);
  /// `p` as the host enforces it: docs_url defaults to this server's /idempotency page.
  [[nodiscard]] policy::Policy published(policy::Policy p) const;

  std::unique_ptr<server::Transport> m_transport;  // last to go: connections refer to the handlers' options
  std::atomic<int> m_policyInForce{0};
  std::atomic<int> m_policyVersion{0};
  std::mutex m_reloading;  // one reload at a time
  std::unique_ptr<gate::Host> m_host;
  std::unique_ptr<gate::Execution> m_execution;  // the demo API or options.execution's: goes before the host
  std::unique_ptr<gate::Gate> m_gate;            // the main listener's handler, over the execution
  std::unique_ptr<server::Handler> m_admin;
  std::unique_ptr<server::RawRoute> m_rawRoute;  // from options.rawRoute
  std::thread m_thread;
};

}  // namespace idem::endpoint
