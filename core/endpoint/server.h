#pragma once
// The embedded test endpoint over HTTP (cpp-httplib): `idemctl serve`, the demo and the
// endpoint tests run it. Construction checks the store and binds the port; run() serves until
// stop(), then lets in-flight requests finish and flushes the trace.
#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/endpoint/service.h"
#include "core/policy/policy.h"

namespace idem::endpoint {

struct ServerOptions {
  std::string conninfo;
  policy::Policy policy;  // its docs_url is rewritten to this server's /idempotency
  std::string host = "127.0.0.1";
  int port = 0;       // 0: any free port
  int threads = 64;   // HTTP worker threads (a keep-alive connection holds one)
  int poolSize = 16;  // store connections
  bool allowFaultInjection = false;
  std::size_t maxBodyBytes = 1024 * 1024;  // larger bodies are answered 413
  std::chrono::milliseconds traceFlushInterval{100};
  /// Identical decisions on one key kept as trace rows per batch before the rest fold into one
  /// counted row (a retry storm); 0: one row per decision, always.
  std::size_t traceFoldAfter = 3;
  /// false: unnamed statements only, for a pooler in transaction mode that does not keep
  /// prepared statements (PgBouncer before 1.21); the pool also finds that out by itself.
  bool preparedStatements = true;
  /// Receives one JSON line per request (thread-safe calls); empty: no access log.
  std::function<void(const std::string&)> accessLog;
};

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
  /// "http://127.0.0.1:PORT"
  [[nodiscard]] std::string url() const;
  [[nodiscard]] int policyVersion() const { return m_policyVersion; }

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
  void checkStop();

  ServerOptions m_options;
  int m_policyVersion = 0;
  int m_port = 0;
  std::unique_ptr<Impl> m_impl;
  std::unique_ptr<Service> m_service;
  std::atomic<bool> m_stopRequested{false};
  std::thread m_thread;
};

}  // namespace idem::endpoint
