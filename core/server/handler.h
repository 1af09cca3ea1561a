#pragma once
// What a listener hands each parsed request to. The transport (transport.h, connection.h) owns
// sockets, limits, deadlines, request ids and the access log; a Handler owns what an answer
// says: `serve`'s demo API, the proxy's forwarder, the admin listener's health and metrics.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/http/headers.h"
#include "core/http/response.h"
#include "core/server/metrics.h"

namespace idem::server {

struct Request {
  std::string method;
  std::string path;  // without the query string
  std::multimap<std::string, std::string> query;
  http::Headers headers;
  std::string body;
  std::string requestId;
  std::string target;  // the request-target exactly as received (path and query), for forwarding
  std::string remote;  // the peer's address, for X-Forwarded-For
};

/// The response plus what the log line and the metrics need to know.
struct Handled {
  http::Response response;
  std::string tier;
  std::string outcome;
  std::string tenant;
  std::string key;
  int generation = 0;
  std::string resource;
  /// Under a tier in observe: what enforcement would have answered (a gate outcome label).
  std::string would;
  /// What the answer's body is counted against (a replay's share of the replay budget): the
  /// connection keeps it until the answer is written. Null for most answers.
  std::shared_ptr<const void> hold;

  /// For the operator's access log only, never sent: why a refusal was decided so (the store's
  /// error behind a 503, a wait not granted).
  std::string detail;
};

/// Where a request may be answered: `loop` is the connection's executor on the event loop (never
/// block there), `handlers` the threads for work that blocks (the store).
struct Dispatch {
  boost::asio::any_io_executor loop;
  boost::asio::thread_pool& handlers;
};

/// Receives a request's answer, exactly once, from any thread.
using Done = std::function<void(Handled)>;

class Handler {
 public:
  virtual ~Handler() = default;
  /// Answers one request on a handler thread (it may block). Thread-safe. A handler that
  /// answers asynchronously (start()) need not have it.
  [[nodiscard]] virtual Handled handle(const Request& request) {
    throw std::logic_error("this handler answers " + request.method + " only through start()");
  }
  /// Called on the event loop for every request. true: the handler took the request and calls
  /// `done` once, whenever and from wherever its answer is ready (it moved both from); false: the
  /// HTTP layer runs handle() on a handler thread (the default: what blocks stays off the loop).
  virtual bool start(Request& request, const Dispatch& where, Done& done) {
    (void)request, (void)where, (void)done;
    return false;
  }
  /// The server began to stop (called on the event loop): end waits that would keep the loop
  /// busy, such as the proxy's late answers.
  virtual void stopping() {}
  /// Where the HTTP layer counts every answer, its own refusals included.
  [[nodiscard]] virtual Metrics& metrics() = 0;
  /// The server stopped and every request was answered: end background work (the server
  /// flushes the trace after this returns).
  virtual void finish() {}
  /// More Prometheus exposition text for the admin listener's /metrics (the proxy's upstream
  /// connections); "" for none.
  [[nodiscard]] virtual std::string metricsText() const { return {}; }
};

}  // namespace idem::server
