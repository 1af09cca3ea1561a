#include "core/proxy/upstream.h"

#include <sys/socket.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <atomic>
#include <charconv>
#include <stdexcept>

namespace idem::proxy {
namespace {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
}  // namespace

bool bodyWithoutDefinedMeaning(const std::string& method, const std::string& body) {
  if (body.empty()) return false;
  return method == "GET" || method == "HEAD" || method == "DELETE" || method == "OPTIONS" || method == "TRACE";
}

std::optional<UpstreamUrl> parseUpstreamUrl(const std::string& text, std::string& error) {
  constexpr std::string_view kScheme = "http://";
  if (text.rfind(kScheme, 0) != 0) {
    error = "the upstream must be an http:// URL (e.g. http://127.0.0.1:5000); TLS to the upstream is not supported";
    return std::nullopt;
  }
  std::string_view rest = std::string_view(text).substr(kScheme.size());
  const auto slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  std::string_view base = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (base.find_first_of("?#") != std::string_view::npos) {
    error = "the upstream URL must not carry a query or fragment";
    return std::nullopt;
  }
  while (!base.empty() && base.back() == '/') base.remove_suffix(1);
  UpstreamUrl u;
  u.basePath = std::string(base);
  u.authority = std::string(authority);
  const auto colon = authority.rfind(':');
  const bool bracketed = !authority.empty() && authority.front() == '[';
  std::string_view host = authority;
  if (colon != std::string_view::npos && (!bracketed || authority[colon - 1] == ']')) {
    host = authority.substr(0, colon);
    const std::string_view port = authority.substr(colon + 1);
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), u.port);
    if (ec != std::errc{} || end != port.data() + port.size() || u.port < 1 || u.port > 65535) {
      error = "the upstream URL's port must be a number from 1 to 65535";
      return std::nullopt;
    }
  }
  if (bracketed && host.size() >= 2 && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) {
    error = "the upstream URL names no host";
    return std::nullopt;
  }
  u.host = std::string(host);
  return u;
}

// One connection to the upstream with its own event loop: operations run on the calling thread
// for as long as the caller allows, and a pending read survives between runs (a late answer).
struct Exchange::Conn {
  net::io_context io{1};
  tcp::socket socket{io};
  beast::flat_buffer buffer;
  bhttp::request<bhttp::string_body> request;
  std::optional<bhttp::response_parser<bhttp::string_body>> parser;
  Clock::time_point idleSince;
  bool reused = false;
  bool readDone = false;
  beast::error_code readError;
  std::size_t maxAnswerBytes = 0;
  bool head = false;
  std::atomic<long long>* live = nullptr;  // the pool's count of open connections

  // Drops what is pending with the connection, so no operation outlives the members it uses.
  ~Conn() {
    beast::error_code ignored;
    socket.close(ignored);
    io.restart();
    io.poll();
    if (live) --*live;
  }

  // Reads the answer in the background of the loop. An interim 1xx answer (103 Early Hints) is
  // not the answer: the read goes on for the final one.
  void startRead() {
    auto& p = parser.emplace();
    p.header_limit(64 * 1024);
    p.body_limit(maxAnswerBytes);
    if (head) p.skip(true);
    readDone = false;
    readError = {};
    bhttp::async_read(socket, buffer, p, [this](beast::error_code e, std::size_t) {
      if (!e && parser->get().result_int() / 100 == 1 && parser->get().result_int() != 101) return startRead();
      readError = e;
      readDone = true;
    });
  }

  // Runs the loop until `done` or `limit`; true when done.
  bool runUntil(const bool& done, Clock::time_point limit) {
    while (!done) {
      if (Clock::now() >= limit) return false;
      if (io.stopped()) io.restart();
      io.run_one_until(limit);
    }
    return true;
  }

  // The answer once read: None, or Broken (the connection failed after the request went out).
  Sent finishRead() {
    Sent s;
    if (readError) {
      s.failure = Failure::Broken;
      s.detail = readError == bhttp::error::body_limit
                     ? std::string("the upstream's answer is larger than the proxy stores")
                     : "the connection failed after the request was sent (" + readError.message() +
                           (parser->got_some() ? ", part of an answer had arrived)" : ", no answer had arrived)");
      return s;
    }
    auto res = parser->release();
    s.answer.status = static_cast<int>(res.result_int());
    const bool bodyAllowed = !head && s.answer.status / 100 != 1 && s.answer.status != 204 && s.answer.status != 304;
    s.answer.closeDelimited = bodyAllowed && !res.has_content_length() && !res.chunked();
    for (const auto& f : res) s.answer.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    s.answer.body = std::move(res.body());
    return s;
  }

  // A pooled connection the upstream has closed (or written to unasked) must not be reused: a
  // request sent on it would fail in a way that looks like "may have executed".
  bool stillUsable() {
    char byte;
    const ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
};

Exchange::Exchange(std::unique_ptr<Conn> conn) : m_conn(std::move(conn)) {}
Exchange::~Exchange() = default;  // closes the socket; a pending read is dropped with its loop

std::optional<Sent> Exchange::poll(std::chrono::milliseconds slice) {
  if (!m_conn->runUntil(m_conn->readDone, Clock::now() + slice)) return std::nullopt;
  return m_conn->finishRead();
}

struct Upstream::Resolved {
  tcp::resolver::results_type endpoints;
};

Upstream::Upstream(UpstreamUrl url, UpstreamOptions options)
    : m_url(std::move(url)), m_options(options), m_resolved(std::make_unique<Resolved>()) {
  net::io_context io;
  tcp::resolver resolver(io);
  beast::error_code ec;
  m_resolved->endpoints = resolver.resolve(m_url.host, std::to_string(m_url.port), ec);
  if (ec || m_resolved->endpoints.empty())
    throw std::runtime_error("cannot resolve the upstream host " + m_url.host + ": " + ec.message());
}

Upstream::~Upstream() = default;

std::unique_ptr<Exchange::Conn> Upstream::takeIdle() {
  std::lock_guard lock(m_mutex);
  while (!m_idle.empty()) {
    auto conn = std::move(m_idle.back());
    m_idle.pop_back();
    if (Clock::now() - conn->idleSince <= m_options.maxIdle && conn->stillUsable()) return conn;
  }
  return nullptr;
}

void Upstream::giveBack(std::unique_ptr<Exchange::Conn> conn) {
  conn->idleSince = Clock::now();
  conn->reused = true;
  conn->parser.reset();
  std::lock_guard lock(m_mutex);
  if (m_idle.size() < m_options.maxIdleConnections) m_idle.push_back(std::move(conn));
}

Sent Upstream::send(const UpstreamRequest& request, bool idempotent) {
  try {
    bool staleRetry = false;
    Sent s = attempt(request, takeIdle(), staleRetry);
    // A pooled connection the upstream closed just as it was taken: nothing reached the upstream
    // (or the method may be resent), so one fresh connection gets the request.
    if (staleRetry && (s.failure == Failure::NotSent || idempotent)) s = attempt(request, nullptr, staleRetry);
    return s;
  } catch (const std::exception& e) {
    // Only what comes before the write can throw (a descriptor or memory the process could not
    // get): the request never went out.
    Sent s;
    s.failure = Failure::NotSent;
    s.busy = true;
    s.detail = std::string("the proxy could not prepare the upstream exchange: ") + e.what();
    return s;
  }
}

Sent Upstream::attempt(const UpstreamRequest& r, std::unique_ptr<Exchange::Conn> conn, bool& staleRetry) {
  staleRetry = false;
  Sent s;
  const auto notSent = [&s](std::string why) {
    s.failure = Failure::NotSent;
    s.detail = std::move(why);
    return std::move(s);
  };
  if (!conn) {
    // Every open connection counts, late-answer waiters included: the start-up check sized the
    // descriptor budget on this bound.
    if (static_cast<std::size_t>(m_live.fetch_add(1)) >= m_options.maxConnections) {
      --m_live;
      s.busy = true;
      return notSent("all " + std::to_string(m_options.maxConnections) +
                     " connections to the upstream are in use (--upstream-connections)");
    }
    try {
      conn = std::make_unique<Exchange::Conn>();
    } catch (const std::exception& e) {
      --m_live;
      s.busy = true;
      return notSent(std::string("no descriptor for another upstream connection: ") + e.what());
    }
    conn->live = &m_live;
    bool done = false;
    beast::error_code ec;
    net::async_connect(conn->socket, m_resolved->endpoints, [&](beast::error_code e, const tcp::endpoint&) {
      ec = e;
      done = true;
    });
    if (!conn->runUntil(done, Clock::now() + m_options.connectTimeout))
      return notSent("connecting to the upstream timed out");
    if (ec) {
      s.busy = ec == net::error::no_descriptors;
      return notSent("connecting to the upstream failed: " + ec.message());
    }
    ++m_opened;
    beast::error_code ignored;
    conn->socket.set_option(tcp::no_delay(true), ignored);
  } else {
    ++m_reused;
  }
  const bool reused = conn->reused;

  auto& req = conn->request;
  req = {};
  req.version(11);
  req.method_string(r.method);
  req.target(m_url.basePath + r.target);
  for (const auto& [name, value] : r.headers) req.insert(name, value);
  req.set(bhttp::field::host, m_url.authority);
  const bool closeAfter = bodyWithoutDefinedMeaning(r.method, r.body);
  req.keep_alive(!closeAfter);
  req.body() = r.body;
  // A request that may carry a body says how long it is; GET and HEAD without one send nothing.
  if (!r.body.empty() || (r.method != "GET" && r.method != "HEAD")) req.content_length(r.body.size());

  {
    bool done = false;
    beast::error_code ec;
    bhttp::async_write(conn->socket, req, [&](beast::error_code e, std::size_t) {
      ec = e;
      done = true;
    });
    if (!conn->runUntil(done, Clock::now() + m_options.connectTimeout)) {
      // The whole request never went out; closing the connection makes sure it never will.
      staleRetry = reused;
      return notSent("writing the request to the upstream timed out");
    }
    if (ec) {
      staleRetry = reused;
      return notSent("writing the request to the upstream failed: " + ec.message());
    }
  }

  conn->maxAnswerBytes = m_options.maxAnswerBytes;
  conn->head = r.method == "HEAD";
  conn->startRead();
  if (!conn->runUntil(conn->readDone, Clock::now() + m_options.timeout)) {
    s.failure = Failure::NoAnswer;
    s.detail = "the upstream did not answer within the timeout";
    s.pending = std::make_unique<Exchange>(std::move(conn));
    return s;
  }
  // Closed without a byte of answer on a reused connection: most likely the upstream closed it
  // while idle, as the request arrived.
  const auto& parser = *conn->parser;
  staleRetry = reused && conn->readError && !parser.got_some();
  const bool keep = !closeAfter && !conn->readError && !parser.get().need_eof() && parser.get().keep_alive();
  s = conn->finishRead();
  if (s.failure == Failure::None && keep && conn->buffer.size() == 0) giveBack(std::move(conn));
  return s;
}

}  // namespace idem::proxy
