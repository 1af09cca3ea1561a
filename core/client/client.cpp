#include "core/client/client.h"

#include <httplib.h>

#include <charconv>

namespace idem::client {

std::string ClientResponse::header(std::string_view name) const {
  auto v = http::findHeader(headers, name);
  return v ? std::string(*v) : std::string();
}

class Client::Impl {
 public:
  Impl(const std::string& host, int port) : http(host, port) {}
  httplib::Client http;
};

namespace {
ClientResponse convert(const httplib::Result& r) {
  ClientResponse out;
  if (!r) {
    out.error = httplib::to_string(r.error());
    return out;
  }
  out.status = r->status;
  for (const auto& [k, v] : r->headers) out.headers.emplace_back(k, v);
  out.body = r->body;
  return out;
}

httplib::Headers toHttplib(const http::Headers& headers, std::string& contentType) {
  httplib::Headers out;
  for (const auto& [k, v] : headers) {
    if (http::equalsIgnoreCase(k, "Content-Type")) {
      contentType = v;
      continue;
    }
    out.emplace(k, v);
  }
  return out;
}
}  // namespace

Client::Client(const std::string& host, int port, std::chrono::milliseconds timeout)
    : m_impl(std::make_unique<Impl>(host, port)) {
  m_impl->http.set_keep_alive(true);
  // cpp-httplib writes a request's head and body separately: with Nagle on, the body waits for
  // the server's delayed ACK and every POST took ~40 ms on loopback.
  m_impl->http.set_tcp_nodelay(true);
  m_impl->http.set_connection_timeout(std::chrono::seconds(5));
  m_impl->http.set_read_timeout(timeout);
  m_impl->http.set_write_timeout(timeout);
}

Client::~Client() = default;

ClientResponse Client::post(const std::string& path, const http::Headers& headers, const std::string& body) {
  std::string contentType;
  auto h = toHttplib(headers, contentType);
  return convert(m_impl->http.Post(path, h, body, contentType));
}

ClientResponse Client::get(const std::string& path, const http::Headers& headers) {
  std::string contentType;
  auto h = toHttplib(headers, contentType);
  return convert(m_impl->http.Get(path, h));
}

bool splitHostPort(const std::string& url, std::string& host, int& port) {
  std::string rest = url;
  if (rest.rfind("http://", 0) == 0) rest = rest.substr(7);
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  host = rest.substr(0, colon);
  const std::string p = rest.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  return ec == std::errc{} && ptr == p.data() + p.size() && port >= 0 && port <= 65535;
}

}  // namespace idem::client
