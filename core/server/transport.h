#pragma once
// The HTTP transport (Boost.Beast, asynchronous): listeners, connections, limits, deadlines,
// request ids, the access log and the transport's counters. It answers nothing itself: each
// parsed request goes to the listener's Handler (handler.h). `serve` and `proxy` run it through
// their host (core/endpoint/server.h); anything with a Handler can.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/server/bodybudget.h"
#include "core/server/handler.h"

namespace idem::server {

class RawRoute;

/// What the transport enforces (core/server/README.md, "Limits and slow clients"); each refusal
/// says so with a problem body.
struct TransportOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port
  /// Threads that run the handlers; a connection holds one only while its request is handled
  /// (a slow or idle client holds none).
  int threads = 64;
  std::size_t maxBodyBytes = 1024 * 1024;  // after framing, any framing: larger is 413
  std::size_t maxHeaderBytes = 16 * 1024;  // request line + header block: larger is 431 (at most kMaxHeaderBytes)
  std::size_t maxHeaderCount = 100;        // more header fields: 431
  int maxConnections = 4096;               // more open at once: 503 and close
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
  /// Receives one JSON line per request (thread-safe calls); empty: no access log.
  std::function<void(const std::string&)> accessLog;
  /// adminPort >= 0 (0: any free port): a second listener for operators (/healthz, /metrics),
  /// under the same per-request limits, with a connection budget and handler threads of its own
  /// (application clients cannot use them up).
  std::string adminHost = "127.0.0.1";
  int adminPort = -1;
};

/// The largest maxHeaderBytes: Beast keeps each field's length in 16 bits, so a block bigger
/// than this could hold a field the parser cannot store.
inline constexpr std::size_t kMaxHeaderBytes = 64 * 1024;
/// The admin listener's own budget: connections, per client, and handler threads.
inline constexpr int kAdminConnections = 64;
inline constexpr int kAdminConnectionsPerClient = 16;
inline constexpr int kAdminThreads = 2;

/// A server could not start. exitCode follows idemctl's codes (2 usage, 3 unavailable).
class StartError : public std::runtime_error {
 public:
  StartError(const std::string& message, int exitCode) : std::runtime_error(message), m_exitCode(exitCode) {}
  [[nodiscard]] int exitCode() const { return m_exitCode; }

 private:
  int m_exitCode;
};

/// What answers one transport: the main listener's handler, the admin listener's (when there is
/// one), a raw route tried before the main handler (may be null), and the page problem `type`s
/// link. The handlers outlive run().
struct Handlers {
  Handler& main;
  Handler* admin = nullptr;
  RawRoute* raw = nullptr;
  std::string docsUrl;
  /// File descriptors the host keeps for itself (its store connections): the connection limit
  /// is lowered so that these stay available.
  int reservedDescriptors = 0;
};

class Transport {
 public:
  /// Checks the limits (StartError, exit 2, for what cannot be honoured); binds nothing yet.
  explicit Transport(TransportOptions options);
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  ~Transport();

  /// Binds the main listener and, with adminPort >= 0, the admin one, so their ports are known
  /// before the first request. Throws StartError (exit 2) when an address cannot be bound.
  void listen();
  /// Gives the listeners what answers them (after listen(), before run()).
  void attach(const Handlers& handlers);

  [[nodiscard]] const TransportOptions& options() const { return m_options; }
  [[nodiscard]] int port() const { return m_port; }
  [[nodiscard]] int adminPort() const { return m_adminPort; }
  /// "http://HOST:PORT"; the admin one is "" without an admin listener.
  [[nodiscard]] std::string url() const;
  [[nodiscard]] std::string adminUrl() const;
  [[nodiscard]] const TransportStats& stats() const;

  /// Serves until stop(); returns once every accepted request is answered and every handler
  /// thread has finished.
  void run();
  /// Asks run() to return. Thread-safe; callable before run() starts.
  void stop();

 private:
  class Impl;
  TransportOptions m_options;
  int m_port = 0;
  int m_adminPort = 0;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace idem::server
