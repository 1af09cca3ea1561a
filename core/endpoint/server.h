#pragma once
// The embedded test endpoint over HTTP (Boost.Beast, asynchronous): `idemctl serve`, the demo
// and the endpoint tests run it. Construction checks the store and binds the port; run() serves
// until stop(), then lets in-flight requests finish and flushes the trace.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/endpoint/service.h"
#include "core/policy/policy.h"

namespace idem::endpoint {

struct ServerOptions {
  std::string conninfo;
  policy::Policy policy;  // its docs_url is rewritten to this server's /idempotency
  std::string host = "127.0.0.1";
  int port = 0;       // 0: any free port
  /// Threads that run the handlers; a connection holds one only while its request is handled
  /// (a slow or idle client holds none).
  int threads = 64;
  int poolSize = 16;  // store connections
  bool allowFaultInjection = false;
  // Limits (core/endpoint/README.md, "Limits and slow clients"); each one refused says so with a problem body.
  std::size_t maxBodyBytes = 1024 * 1024;    // after framing, any framing: larger is 413
  std::size_t maxHeaderBytes = 16 * 1024;    // request line + header block: larger is 431 (at most kMaxHeaderBytes)
  std::size_t maxHeaderCount = 100;          // more header fields: 431
  int maxConnections = 4096;                 // more open at once: 503 and close
  /// More open at once from one client address: 429 and close. 0: half of maxConnections (as
  /// lowered to fit the descriptor limit), so one client cannot take every slot; a gateway that
  /// is the only client needs it raised.
  int maxConnectionsPerClient = 0;
  /// Request-body bytes buffered by all connections together; a request whose body does not
  /// fit is 503 + Retry-After (before its body is read when it has a Content-Length).
  /// 0: 64 MiB, or 8 x maxBodyBytes when that is more.
  std::size_t maxBufferedBodyBytes = 0;
  std::chrono::milliseconds headerTimeout{10'000};  // whole header block, from accept or first byte
  std::chrono::milliseconds bodyTimeout{30'000};    // whole body, after the header block
  std::chrono::milliseconds idleTimeout{5'000};     // keep-alive: until the next request's first byte
  std::chrono::milliseconds writeTimeout{10'000};   // the answer, to a client that does not read
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
  /// Receives one JSON line per request (thread-safe calls); empty: no access log.
  std::function<void(const std::string&)> accessLog;
  /// Makes what answers the listener from the service (the proxy's forwarder); empty: the
  /// service's own routes answer.
  std::function<std::unique_ptr<Handler>(Service&)> frontHandler;
  /// adminPort >= 0 (0: any free port): a second listener that answers only /healthz and
  /// /metrics, for operators (the proxy's admin port), under the same per-request limits, with a
  /// connection budget and handler threads of its own (application clients cannot use them up).
  std::string adminHost = "127.0.0.1";
  int adminPort = -1;
  /// The longest wait at start for the policy lock; past it the start fails naming its holder.
  std::chrono::milliseconds lockTimeout{10'000};
  /// The policy's tenant header is accepted only from these peers (CIDR ranges, or "any");
  /// empty: from any peer (tenantgate.h).
  std::vector<std::string> trustedPeers;
  /// Start although live keys were written under another tenant source (store/tenantscope.h).
  bool acceptTenantChange = false;
};

/// The largest --max-header-bytes: Beast keeps each field's length in 16 bits, so a block
/// bigger than this could hold a field the parser cannot store.
inline constexpr std::size_t kMaxHeaderBytes = 64 * 1024;
/// The admin listener's own budget: connections, per client, and handler threads.
inline constexpr int kAdminConnections = 64;
inline constexpr int kAdminConnectionsPerClient = 16;
inline constexpr int kAdminThreads = 2;

/// The server could not start. exitCode follows idemctl's codes (2 usage, 3 unavailable).
class StartError : public std::runtime_error {
 public:
  StartError(const std::string& message, int exitCode) : std::runtime_error(message), m_exitCode(exitCode) {}
  [[nodiscard]] int exitCode() const { return m_exitCode; }

 private:
  int m_exitCode;
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

  [[nodiscard]] int port() const { return m_port; }
  [[nodiscard]] const ServerOptions& options() const { return m_options; }
  /// "http://127.0.0.1:PORT"
  [[nodiscard]] std::string url() const;
  /// The admin listener's port and URL; 0 and "" without one.
  [[nodiscard]] int adminPort() const { return m_adminPort; }
  [[nodiscard]] std::string adminUrl() const;
  [[nodiscard]] int policyVersion() const { return m_policyVersion; }
  /// The version the sweeper and the console follow (chosen by the operator); 0: none chosen.
  [[nodiscard]] int policyInForce() const { return m_policyInForce; }

  /// Serves until stop(); returns once in-flight requests are answered and the trace is flushed.
  void run();
  /// run() on a background thread.
  void start();
  /// Asks run() to return. Thread-safe; callable before run() starts.
  void stop();
  /// Joins the background thread of start().
  void wait();

  [[nodiscard]] Service& service() { return *m_service; }

 private:
  class Impl;

  ServerOptions m_options;
  std::unique_ptr<Handler> m_tenantGate;  // with trustedPeers: in front of the handler
  int m_policyInForce = 0;
  int m_policyVersion = 0;
  int m_port = 0;
  int m_adminPort = 0;
  std::unique_ptr<Impl> m_impl;
  std::unique_ptr<Service> m_service;
  std::unique_ptr<Handler> m_front;  // before m_service goes: it uses the service
  std::unique_ptr<Handler> m_admin;
  std::atomic<bool> m_stopRequested{false};
  std::thread m_thread;
};

}  // namespace idem::endpoint
