#pragma once
// The proxy's HTTP/1.1 client to its upstream (Boost.Beast, asynchronous) with a bounded
// keep-alive pool. It tells apart the three ways a request can fail, because each means something
// different for a key:
//   NotSent  — refused or broken before the whole request went out (no descriptor, connect
//              refused or timed out, every pooled connection busy, the write failed before the
//              request's last byte): nothing can have executed.
//   NoAnswer — sent, and no answer within the timeout: the upstream may be executing it; the
//              Exchange stays open so its late answer can still be read.
//   Broken   — sent, then the connection broke or the answer was unusable: it may have executed
//              and no answer will come.
// Every operation runs on the caller's event loop (no thread waits on the upstream); one
// connection costs one descriptor.
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/http/headers.h"

namespace idem::proxy {

/// http://HOST[:PORT][/BASE] — where requests go; BASE is prefixed to every forwarded target.
struct UpstreamUrl {
  std::string host;
  int port = 80;
  std::string basePath;   // "" or "/base" (no trailing slash)
  std::string authority;  // host[:port] as the Host header writes it
};

/// nullopt with `error` saying why (only plain http:// is supported).
std::optional<UpstreamUrl> parseUpstreamUrl(const std::string& text, std::string& error);

struct UpstreamRequest {
  std::string method;
  std::string target;     // path and query, as the client sent them
  http::Headers headers;  // end-to-end headers only (forwarding.h); Host and Content-Length are set here
  std::string body;
};

struct UpstreamAnswer {
  int status = 0;
  http::Headers headers;
  std::string body;
  /// Ended by the upstream closing the connection (no Content-Length, not chunked): a FIN
  /// mid-body looks the same as the end, so the answer cannot be known to be whole.
  bool closeDelimited = false;
};

enum class Failure { None, NotSent, NoAnswer, Broken };

class Exchange;

struct Sent {
  Failure failure = Failure::None;
  UpstreamAnswer answer;              // failure == None
  std::string detail;                 // what happened, for the operator's log
  std::shared_ptr<Exchange> pending;  // failure == NoAnswer: where the late answer may still come
  /// failure == NotSent because the proxy's own bound was reached (no free upstream connection or
  /// descriptor), not because the upstream refused: the client is told the proxy is busy (503).
  bool busy = false;
};

/// Descriptors one upstream connection costs (its socket; the event loop is the server's): what the
/// proxy's start-up check counts against RLIMIT_NOFILE.
inline constexpr std::size_t kDescriptorsPerUpstreamConnection = 1;

using OnSent = std::function<void(Sent)>;

/// RFC 9110 gives a body on these methods no defined meaning, so an upstream may ignore it — and
/// then read it as the next request on the connection. Such a request goes on a connection that
/// is closed after its answer (Connection: close), never back to the pool.
bool bodyWithoutDefinedMeaning(const std::string& method, const std::string& body);

/// A request that was sent and whose answer has not come yet (Sent::pending): its read goes on.
class Exchange {
 public:
  virtual ~Exchange() = default;
  /// Calls `then` once, on the loop: with the answer (None) or Broken when it comes, NoAnswer
  /// when `bound` passes first or cancel() is called.
  virtual void awaitLate(std::chrono::milliseconds bound, OnSent then) = 0;
  /// Stops waiting (the proxy is stopping): the pending awaitLate gets NoAnswer now.
  virtual void cancel() = 0;
};

struct UpstreamOptions {
  std::chrono::milliseconds timeout{30'000};        // for the answer, after the request is sent
  std::chrono::milliseconds connectTimeout{5'000};  // connect and write
  std::chrono::milliseconds maxIdle{1'000};         // a pooled connection idle longer is not reused
  std::size_t maxIdleConnections = 64;
  /// Open connections to the upstream at most (in use, idle, or awaiting a late answer); a
  /// request beyond it is not sent (NotSent, busy).
  std::size_t maxConnections = 256;
  std::size_t maxAnswerBytes = 16 * 1024 * 1024;  // larger answers are Broken (not storable)
};

class Upstream {
 public:
  /// Resolves the host now; throws std::runtime_error when it cannot.
  Upstream(UpstreamUrl url, UpstreamOptions options);
  ~Upstream();
  Upstream(const Upstream&) = delete;
  Upstream& operator=(const Upstream&) = delete;

  /// Sends one request on `loop` and calls `done` once with what became of it (see Failure), on
  /// that executor. `idempotent`: the method may be resent (RFC 9110 §9.2.2), so a pooled
  /// connection the upstream had closed is retried on a fresh one even after the request was
  /// written. `timeout`: for the answer after the request went out (0: the options').
  void send(UpstreamRequest request, bool idempotent, const boost::asio::any_io_executor& loop, OnSent done,
            std::chrono::milliseconds timeout = {});

  [[nodiscard]] const UpstreamUrl& url() const { return m_url; }
  [[nodiscard]] long long connectionsOpened() const { return m_opened.load(); }
  [[nodiscard]] long long connectionsReused() const { return m_reused.load(); }
  [[nodiscard]] long long connectionsOpen() const { return m_live.load(); }

 private:
  class Call;
  struct Conn;
  std::unique_ptr<Conn> takeIdle();
  void giveBack(std::unique_ptr<Conn> conn);

  UpstreamUrl m_url;
  UpstreamOptions m_options;
  struct Resolved;
  std::unique_ptr<Resolved> m_resolved;
  std::atomic<long long> m_opened{0};
  std::atomic<long long> m_reused{0};
  std::atomic<long long> m_live{0};  // open connections, counted down by each Conn's destructor (so before m_idle)
  std::mutex m_mutex;
  std::vector<std::unique_ptr<Conn>> m_idle;  // most recently used last
};

}  // namespace idem::proxy
