#pragma once
// A small HTTP/1.1 client for calling a server (the demo's seeding and live traffic, idemctl's
// own health checks, the tests),
// so callers need not include cpp-httplib, whose compiled library fixes its configuration.
// One Client per thread; it keeps its connection alive between requests.
// `idemctl conform` calls any service with it, over http or https.
#include <chrono>
#include <memory>
#include <string>

#include "core/http/headers.h"

namespace idem::client {

struct ClientResponse {
  int status = 0;  // 0: no HTTP answer (see error)
  http::Headers headers;
  std::string body;
  std::string error;  // transport failure, in words

  /// The first header with this name, or "".
  [[nodiscard]] std::string header(std::string_view name) const;
};

class Client {
 public:
  /// host and port of the server, e.g. ("127.0.0.1", 8080).
  Client(const std::string& host, int port, std::chrono::milliseconds timeout = std::chrono::seconds(70));
  /// "http://HOST[:PORT]" or "https://HOST[:PORT]" (the server's certificate is verified), no path.
  Client(const std::string& schemeHostPort, std::chrono::milliseconds timeout);
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  /// POST with a body; headers are sent as given (set Content-Type there).
  ClientResponse post(const std::string& path, const http::Headers& headers, const std::string& body);
  ClientResponse get(const std::string& path, const http::Headers& headers = {});
  /// Any of GET, POST, PUT, PATCH, DELETE (another method: error set, status 0).
  ClientResponse send(std::string_view method, const std::string& path, const http::Headers& headers,
                      const std::string& body);

 private:
  class Impl;
  std::unique_ptr<Impl> m_impl;
};

/// Splits "http://HOST:PORT" (or "HOST:PORT") into host and port; false when it is not that.
bool splitHostPort(const std::string& url, std::string& host, int& port);

}  // namespace idem::client
