#pragma once
// What a listener hands each parsed request to. The HTTP layer (server.h, connection.h) owns
// sockets, limits, deadlines, request ids and the access log; a Handler owns what an answer
// says: `serve`'s Service, the proxy's forwarder, the proxy's admin listener.
#include <map>
#include <string>

#include "core/endpoint/metrics.h"
#include "core/enforce/problem.h"
#include "core/http/headers.h"

namespace idem::endpoint {

struct ServiceRequest {
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
  enforce::Response response;
  std::string tier;
  std::string outcome;
  std::string tenant;
  std::string key;
  int generation = 0;
  std::string resource;
};

class Handler {
 public:
  virtual ~Handler() = default;
  /// Answers one request on a handler thread (it may block). Thread-safe.
  [[nodiscard]] virtual Handled handle(const ServiceRequest& request) = 0;
  /// Where the HTTP layer counts every answer, its own refusals included.
  [[nodiscard]] virtual Metrics& metrics() = 0;
  /// The server stopped and every request was answered: end background work (the server
  /// flushes the trace after this returns).
  virtual void finish() {}
  /// More Prometheus exposition text for the admin listener's /metrics (the proxy's upstream
  /// connections); "" for none.
  [[nodiscard]] virtual std::string metricsText() const { return {}; }
};

}  // namespace idem::endpoint
