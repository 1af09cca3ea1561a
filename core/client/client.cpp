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
  explicit Impl(const std::string& schemeHostPort) : http(schemeHostPort) {}
  httplib::Client http;

  void configure(std::chrono::milliseconds timeout) {
    http.set_keep_alive(true);
    // cpp-httplib writes a request's head and body separately: with Nagle on, the body waits for
    // the server's delayed ACK and every POST took ~40 ms on loopback.
    http.set_tcp_nodelay(true);
    http.set_connection_timeout(std::chrono::seconds(5));
    http.set_read_timeout(timeout);
    http.set_write_timeout(timeout);
  }
};

namespace {
// cpp-httplib names its errors in one word ("Connection", "Read"); a person needs a sentence.
std::string describe(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection: return "could not connect";
    case httplib::Error::ConnectionTimeout: return "timed out connecting";
    case httplib::Error::Read: return "the connection closed or timed out before the whole answer came";
    case httplib::Error::Write: return "the connection closed while the request was being sent";
    case httplib::Error::SSLConnection: return "the TLS handshake failed";
    case httplib::Error::SSLServerVerification: return "the server's TLS certificate was not accepted";
    default: return httplib::to_string(e);
  }
}

ClientResponse convert(const httplib::Result& r) {
  ClientResponse out;
  if (!r) {
    out.error = describe(r.error());
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
  m_impl->configure(timeout);
}

Client::Client(const std::string& schemeHostPort, std::chrono::milliseconds timeout)
    : m_impl(std::make_unique<Impl>(schemeHostPort)) {
  m_impl->configure(timeout);
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

ClientResponse Client::send(std::string_view method, const std::string& path, const http::Headers& headers,
                            const std::string& body) {
  std::string contentType;
  auto h = toHttplib(headers, contentType);
  auto& c = m_impl->http;
  if (method == "GET") return convert(c.Get(path, h));
  if (method == "POST") return convert(c.Post(path, h, body, contentType));
  if (method == "PUT") return convert(c.Put(path, h, body, contentType));
  if (method == "PATCH") return convert(c.Patch(path, h, body, contentType));
  if (method == "DELETE") return convert(c.Delete(path, h, body, contentType));
  ClientResponse unsupported;
  unsupported.error = "method " + std::string(method) + " is not one of GET, POST, PUT, PATCH, DELETE";
  return unsupported;
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
