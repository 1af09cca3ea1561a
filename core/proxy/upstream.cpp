#include "core/proxy/upstream.h"

#include <sys/socket.h>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/steady_timer.hpp>
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

struct Upstream::Resolved {
  tcp::resolver::results_type endpoints;
};

// One kept-alive connection to the upstream: its socket is the only descriptor it holds.
struct Upstream::Conn {
  explicit Conn(const net::any_io_executor& ex) : socket(ex) {}
  ~Conn() {
    beast::error_code ignored;
    socket.close(ignored);
    if (live) --*live;
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // A pooled connection the upstream has closed (or written to unasked) must not be reused: a
  // request sent on it would fail in a way that looks like "may have executed", and bytes nobody
  // asked for would be read as the next request's answer.
  bool stillUsable() {
    char byte;
    const ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }

  tcp::socket socket;
  beast::flat_buffer buffer;
  Clock::time_point idleSince;
  bool reused = false;
  std::atomic<long long>* live = nullptr;  // the pool's count of open connections
};

// One request's exchange, as a chain of asynchronous steps on the caller's executor: connect
// (or take a pooled connection), write, read; a timer bounds each step. When the answer's
// deadline passes the caller gets NoAnswer and the read goes on (awaitLate). Every socket step
// is bound to the caller's executor: a kept-alive connection belongs to the strand of the request
// that opened it, and its completions would otherwise run there, beside this request's timer on
// its own strand (two strands of one exchange, at once on two loop threads).
class Upstream::Call : public Exchange, public std::enable_shared_from_this<Upstream::Call> {
 public:
  Call(Upstream& up, UpstreamRequest r, bool idempotent, net::any_io_executor ex, OnSent done,
       std::chrono::milliseconds timeout)
      : m_up(up),
        m_idempotent(idempotent),
        m_ex(std::move(ex)),
        m_timer(m_ex),
        m_done(std::move(done)),
        m_timeout(timeout.count() > 0 ? timeout : up.m_options.timeout) {
    m_head = r.method == "HEAD";
    m_closeAfter = bodyWithoutDefinedMeaning(r.method, r.body);
    m_req.version(11);
    m_req.method_string(r.method);
    m_req.target(up.m_url.basePath + r.target);
    for (const auto& [name, value] : r.headers) m_req.insert(name, value);
    m_req.set(bhttp::field::host, up.m_url.authority);
    m_req.keep_alive(!m_closeAfter);
    // A request that may carry a body says how long it is; GET and HEAD without one send nothing.
    if (!r.body.empty() || (r.method != "GET" && r.method != "HEAD")) m_req.content_length(r.body.size());
    m_req.body() = std::move(r.body);
  }

  void begin() {
    if (auto conn = m_up.takeIdle()) {
      m_conn = std::move(conn);
      ++m_up.m_reused;
      return write();
    }
    connect();
  }

  void awaitLate(std::chrono::milliseconds bound, OnSent then) override {
    net::dispatch(m_ex, [self = shared_from_this(), bound, then = std::move(then)]() mutable {
      if (self->m_lateResult) return self->lateEnd(then, std::move(*self->m_lateResult));
      self->m_then = std::move(then);
      self->arm(bound);
    });
  }

  void cancel() override {
    net::dispatch(m_ex, [self = shared_from_this()] {
      self->m_cancelled = true;
      self->closeSocket();
    });
  }

 private:
  enum class Phase { Connecting, Writing, Reading, Late, Over };

  void connect() {
    m_phase = Phase::Connecting;
    // Every open connection counts, late-answer waiters included: the start-up check sized the
    // descriptor budget on this bound.
    if (static_cast<std::size_t>(m_up.m_live.fetch_add(1)) >= m_up.m_options.maxConnections) {
      --m_up.m_live;
      return notSent("all " + std::to_string(m_up.m_options.maxConnections) +
                         " connections to the upstream are in use (--upstream-connections)",
                     true);
    }
    m_conn = std::make_unique<Conn>(m_ex);
    m_conn->live = &m_up.m_live;
    arm(m_up.m_options.connectTimeout);
    net::async_connect(m_conn->socket, m_up.m_resolved->endpoints,
                       net::bind_executor(m_ex, [self = shared_from_this()](beast::error_code ec, const tcp::endpoint&) { self->connected(ec); }));
  }

  void connected(beast::error_code ec) {
    disarm();
    if (m_timedOut) return notSent("connecting to the upstream timed out", false);
    if (ec) return notSent("connecting to the upstream failed: " + ec.message(), ec == net::error::no_descriptors);
    ++m_up.m_opened;
    beast::error_code ignored;
    m_conn->socket.set_option(tcp::no_delay(true), ignored);
    write();
  }

  void write() {
    m_phase = Phase::Writing;
    arm(m_up.m_options.connectTimeout);
    bhttp::async_write(m_conn->socket, m_req,
                       net::bind_executor(m_ex, [self = shared_from_this()](beast::error_code ec, std::size_t) { self->written(ec); }));
  }

  void written(beast::error_code ec) {
    disarm();
    if (!ec) return read();
    // The request's last byte never went out: nothing can have executed. A pooled connection the
    // upstream closed as it was taken gets one fresh try.
    if (retryFresh()) return;
    notSent(m_timedOut ? std::string("writing the request to the upstream timed out")
                       : "writing the request to the upstream failed: " + ec.message(),
            false);
  }

  void read() {
    m_phase = Phase::Reading;
    arm(m_timeout);
    startRead();
  }

  // An interim 1xx answer (103 Early Hints) is not the answer: the read goes on for the final one.
  void startRead() {
    auto& p = m_parser.emplace();
    p.header_limit(64 * 1024);
    p.body_limit(m_up.m_options.maxAnswerBytes);
    if (m_head) p.skip(true);
    bhttp::async_read(m_conn->socket, m_conn->buffer, p,
                      net::bind_executor(m_ex, [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        const int status = ec ? 0 : static_cast<int>(self->m_parser->get().result_int());
                        if (!ec && status / 100 == 1 && status != 101) return self->startRead();
                        self->answered(ec);
                      }));
  }

  void answered(beast::error_code ec) {
    disarm();
    if (m_phase == Phase::Reading) {
      // Closed without a byte of answer on a reused connection: most likely the upstream closed
      // it while idle, as the request arrived. Resent only when the method allows it.
      if (ec && !m_parser->got_some() && m_idempotent && retryFresh()) return;
      const bool keep = !ec && !m_closeAfter && !m_parser->get().need_eof() && m_parser->get().keep_alive() &&
                        m_conn->buffer.size() == 0;
      Sent s = result(ec);
      if (s.failure == Failure::None && keep) m_up.giveBack(std::move(m_conn));
      m_conn.reset();
      return deliver(std::move(s));
    }
    // A late answer (or none): the connection is not reused.
    Sent s;
    if (m_cancelled || m_lateExpired) {
      s.failure = Failure::NoAnswer;
      s.detail = m_cancelled ? "the proxy stopped before the upstream answered"
                             : "the upstream never answered within the late-answer bound";
    } else {
      s = result(ec);
    }
    m_conn.reset();
    if (!m_then) {
      m_lateResult = std::move(s);
      return;
    }
    const OnSent then = std::move(m_then);  // m_then empty: called once
    lateEnd(then, std::move(s));
  }

  void lateEnd(const OnSent& then, Sent s) {
    m_phase = Phase::Over;
    then(std::move(s));
  }

  Sent result(beast::error_code ec) {
    Sent s;
    if (ec) {
      s.failure = Failure::Broken;
      s.detail = ec == bhttp::error::body_limit
                     ? std::string("the upstream's answer is larger than the proxy stores")
                     : "the connection failed after the request was sent (" + ec.message() +
                           (m_parser->got_some() ? ", part of an answer had arrived)" : ", no answer had arrived)");
      return s;
    }
    auto res = m_parser->release();
    s.answer.status = static_cast<int>(res.result_int());
    const bool bodyAllowed = !m_head && s.answer.status / 100 != 1 && s.answer.status != 204 && s.answer.status != 304;
    s.answer.closeDelimited = bodyAllowed && !res.has_content_length() && !res.chunked();
    for (const auto& f : res) s.answer.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    s.answer.body = std::move(res.body());
    return s;
  }

  bool retryFresh() {
    if (!m_conn || !m_conn->reused || m_retried) return false;
    m_retried = true;
    m_conn.reset();
    m_timedOut = false;
    connect();
    return true;
  }

  void timedOut() {
    switch (m_phase) {
      case Phase::Connecting:
      case Phase::Writing:
        // Closing makes sure the request never goes out whole; the step ends with an error.
        m_timedOut = true;
        return closeSocket();
      case Phase::Reading: {
        m_phase = Phase::Late;
        Sent s;
        s.failure = Failure::NoAnswer;
        s.detail = "the upstream did not answer within " + std::to_string(m_timeout.count()) + " ms";
        s.pending = shared_from_this();
        return deliver(std::move(s));
      }
      case Phase::Late:
        m_lateExpired = true;
        return closeSocket();
      case Phase::Over:
        return;
    }
  }

  void notSent(std::string why, bool busy) {
    m_conn.reset();
    Sent s;
    s.failure = Failure::NotSent;
    s.busy = busy;
    s.detail = std::move(why);
    deliver(std::move(s));
  }

  void deliver(Sent s) {
    if (m_phase != Phase::Late) m_phase = Phase::Over;
    auto done = std::move(m_done);
    m_done = nullptr;
    if (done) done(std::move(s));
  }

  void arm(std::chrono::milliseconds d) {
    m_timer.expires_after(d);
    m_timer.async_wait([self = shared_from_this(), generation = ++m_timerGeneration](beast::error_code ec) {
      if (!ec && generation == self->m_timerGeneration) self->timedOut();
    });
  }
  void disarm() {
    ++m_timerGeneration;
    m_timer.cancel();
  }
  void closeSocket() {
    beast::error_code ignored;
    if (m_conn) m_conn->socket.close(ignored);
  }

  Upstream& m_up;
  bool m_idempotent;
  net::any_io_executor m_ex;
  net::steady_timer m_timer;
  OnSent m_done;
  std::chrono::milliseconds m_timeout;
  bhttp::request<bhttp::string_body> m_req;
  std::optional<bhttp::response_parser<bhttp::string_body>> m_parser;
  std::unique_ptr<Conn> m_conn;
  Phase m_phase = Phase::Connecting;
  unsigned m_timerGeneration = 0;
  bool m_head = false;
  bool m_closeAfter = false;
  bool m_timedOut = false;
  bool m_retried = false;
  bool m_cancelled = false;
  bool m_lateExpired = false;
  OnSent m_then;                    // awaitLate's continuation
  std::optional<Sent> m_lateResult;  // what came before awaitLate was called
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

std::unique_ptr<Upstream::Conn> Upstream::takeIdle() {
  std::lock_guard lock(m_mutex);
  while (!m_idle.empty()) {
    auto conn = std::move(m_idle.back());
    m_idle.pop_back();
    if (Clock::now() - conn->idleSince <= m_options.maxIdle && conn->stillUsable()) return conn;
  }
  return nullptr;
}

void Upstream::giveBack(std::unique_ptr<Conn> conn) {
  conn->idleSince = Clock::now();
  conn->reused = true;
  std::lock_guard lock(m_mutex);
  if (m_idle.size() < m_options.maxIdleConnections) m_idle.push_back(std::move(conn));
}

void Upstream::send(UpstreamRequest request, bool idempotent, const net::any_io_executor& loop, OnSent done,
                    std::chrono::milliseconds timeout) {
  std::make_shared<Call>(*this, std::move(request), idempotent, loop, std::move(done), timeout)->begin();
}

}  // namespace idem::proxy
