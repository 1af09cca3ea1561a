#include "core/server/connection.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <iostream>
#include <optional>
#include <utility>
#include <vector>

#include "core/http/headers.h"
#include "core/http/requestid.h"
#include "core/server/accesslog.h"
#include "core/server/connectionrules.h"
#include "core/server/problems.h"
#include "core/server/requestparser.h"
#include "core/server/target.h"

namespace idem::server {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using Clock = std::chrono::steady_clock;
using Parser = RequestParser;
using Reply = bhttp::response<bhttp::string_body>;

long long wallUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

long long wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

class Connection : public std::enable_shared_from_this<Connection>, public RawExchange {
 public:
  Connection(boost::asio::ip::tcp::socket socket, ConnectionContext& context)
      : m_stream(std::move(socket)),
        m_buffer(context.options.maxHeaderBytes + 4096),
        m_body(context.bodyBudget),
        m_context(context),
        m_options(context.options) {
    beast::error_code ec;
    const auto peer = m_stream.socket().remote_endpoint(ec);
    if (!ec) m_remote = peer.address().to_string();
  }

  void start() {
    {
      std::lock_guard lock(m_context.mutex);
      m_context.connections.emplace(this, weak_from_this());
    }
    readHeader();
  }

  ~Connection() override {
    {
      std::lock_guard lock(m_context.mutex);
      m_context.connections.erase(this);
    }
    m_context.leave(m_peer);
  }
  void setPeer(std::string peer) { m_peer = std::move(peer); }

  [[nodiscard]] auto executor() { return m_stream.get_executor(); }

  // Runs on the connection's strand (posted by closeIdleConnections).
  void closeIfWaiting() {
    if (!m_busy) close();
  }

 private:
  // Keep-alive: the next request's first byte must come within the idle timeout; then its
  // whole header block within the header deadline. A fresh connection starts on the deadline.
  void awaitNextRequest() {
    if (m_context.stopping.load()) return close();
    // What the last request held goes back: its share of the body budget, and the buffer a
    // large header block or body grew (an idle connection keeps a small one).
    m_body.release();
    if (m_buffer.size() == 0 && m_buffer.capacity() > kIdleBufferBytes) m_buffer.shrink_to_fit();
    if (m_buffer.size() > 0) return readHeader();  // pipelined bytes already here
    m_stream.expires_after(m_options.idleTimeout);
    m_stream.async_read_some(m_buffer.prepare(4096),
                             [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                               if (ec) return self->close();
                               self->m_buffer.commit(n);
                               self->readHeader();
                             });
  }

  void readHeader() {
    // Accepted just as the server began to stop: closeIdleConnections may have missed it.
    if (m_context.stopping.load()) return close();
    m_body.release();
    m_parser.emplace(m_options.maxHeaderBytes, m_options.maxHeaderCount, &m_body);
    m_logMethod.clear();
    m_logPath.clear();
    m_parser->header_limit(static_cast<std::uint32_t>(m_options.maxHeaderBytes));
    m_parser->body_limit(m_options.maxBodyBytes);
    m_started = Clock::now();
    m_requestId = http::newRequestId();
    m_stream.expires_after(m_options.headerTimeout);
    bhttp::async_read_header(m_stream, m_buffer, *m_parser,
                             [self = shared_from_this()](beast::error_code ec, std::size_t) { self->onHeader(ec); });
  }

  void onHeader(beast::error_code ec) {
    if (ec) {
      if (quietEnd(ec)) return close();
      return refuse(statusFor(ec));
    }
    m_busy = true;
    m_arrivedUs = wallUs();
    const auto& head = m_parser->get();
    if (static_cast<std::size_t>(std::distance(head.begin(), head.end())) > m_options.maxHeaderCount)
      return refuse(431);
    // A compressed body can inflate far past --max-body; the endpoint takes none (RFC 9110 §8.4.1).
    if (anyValueBut(head, bhttp::field::content_encoding, "identity")) return refuse(415);
    // Only "chunked" framing is understood; anything else cannot be delimited safely.
    if (anyValueBut(head, bhttp::field::transfer_encoding, "chunked")) return refuse(501);
    if (methodInWrongCase(head.method_string()))
      return refuse(problem(http::Problem::MethodCase,
                            "Method names are case-sensitive (RFC 9110 section 9.1): \"" +
                                std::string(head.method_string()) +
                                "\" is not a method this server knows; send it in upper case. Nothing was "
                                "executed or stored.",
                            m_context.docs));
    // A body of declared length takes its bytes from the server's budget before any is read
    // (a chunked one as it arrives): past the budget it is 503, not memory.
    if (const auto length = m_parser->content_length(); length && !m_body.grow(static_cast<std::size_t>(*length)))
      return refuseOverBudget();
    if (m_parser->is_done()) return dispatch();
    if (const auto expect = head.find(bhttp::field::expect); expect != head.end()) {
      if (lowerTrimmed(expect->value()) != "100-continue") return refuse(417);
      return sendContinue();
    }
    readBody();
  }

  void sendContinue() {
    m_continue = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_, 11);
    m_stream.expires_after(m_options.writeTimeout);
    bhttp::async_write(m_stream, *m_continue, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      self->readBody();
    });
  }

  // The body must arrive within the body deadline; its size is capped by the parser for every
  // framing (Content-Length is checked before the first body byte, chunked as chunks arrive).
  void readBody() {
    m_stream.expires_after(m_options.bodyTimeout);
    bhttp::async_read(m_stream, m_buffer, *m_parser, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) {
        if (quietEnd(ec)) return self->close();
        if (self->m_parser && self->m_parser->refusal() == RequestParser::Refusal::OverBudget)
          return self->refuseOverBudget();
        return self->refuse(self->statusFor(ec));
      }
      self->dispatch();
    });
  }

  void dispatch() {
    auto request = m_parser->release();
    m_parser.reset();
    Request sr;
    sr.method = std::string(request.method_string());
    sr.requestId = m_requestId;
    std::string error;
    auto target = parseTarget(request.target(), error);
    if (!target) {
      m_logPath = std::string(request.target());
      m_logMethod = sr.method;
      return answer(problem(http::Problem::BadRequest,
                            error + "; nothing was executed or stored.", m_context.docs),
                    {}, request.keep_alive(), sr.method == "HEAD");
    }
    sr.path = std::move(target->path);
    sr.query = std::move(target->query);
    sr.target = std::string(request.target());
    sr.remote = m_remote;
    for (const auto& f : request) sr.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    sr.body = std::move(request.body());
    m_logMethod = sr.method;
    m_logPath = sr.path;
    // The answer comes back to this connection's strand from wherever it was made; the work
    // guard keeps the loop alive until it does (shutdown waits for this answer).
    const bool keepAlive = request.keep_alive();
    const bool head = sr.method == "HEAD";
    if (m_context.rawRoute) {
      m_rawKeepAlive = keepAlive;
      m_rawHead = head;
      if (m_context.rawRoute->serve(sr, *this, Dispatch{m_stream.get_executor(), m_context.handlers})) return;
    }
    Done done = [self = shared_from_this(), keepAlive, head,
                 work = boost::asio::make_work_guard(m_stream.get_executor())](Handled h) mutable {
      boost::asio::post(self->m_stream.get_executor(), [self, h = std::move(h), keepAlive, head]() mutable {
        auto response = std::move(h.response);  // apart from h: the two arguments move in no fixed order
        self->answer(std::move(response), std::move(h), keepAlive, head);
      });
    };
    // A handler that answers asynchronously (the proxy) starts here, on the loop; any other may
    // block on the store (or an injected delay) for long, so it runs on the handler threads and
    // the event loop keeps reading, writing and timing out other clients.
    try {
      if (m_context.handler.start(sr, Dispatch{m_stream.get_executor(), m_context.handlers}, done)) return;
    } catch (const std::exception&) {
      if (!done) return;  // taken: the handler answers
      Handled h;
      h.response = problemForStatus(500, sr.method, sr.path, m_context.docs);
      h.outcome = "error";
      return done(std::move(h));
    }
    boost::asio::post(m_context.handlers, [self = shared_from_this(), sr = std::move(sr), done = std::move(done)]() mutable {
      done(self->handle(sr));
    });
  }

  // RawExchange: what a raw route (the fault rig) may do with this connection.
  void answer(const http::Response& response) override { answer(response, {}, m_rawKeepAlive, m_rawHead); }

  void reset() override {
    // SO_LINGER 0: close() sends RST instead of FIN.
    beast::error_code ignored;
    m_stream.socket().set_option(boost::asio::socket_base::linger(true, 0), ignored);
    m_stream.close();
  }

  void hang(std::chrono::seconds limit, std::function<void()> ended) override {
    m_hangEnded = std::move(ended);
    m_busy = false;  // a stopping server may close it (closeIfWaiting): that ends the hang
    m_stream.expires_after(limit);
    awaitClientGivingUp();
  }

  [[nodiscard]] long long arrivedUs() const override { return m_arrivedUs; }

  // A hang: read (and drop) until the client closes or resets; when it does is its timeout.
  void awaitClientGivingUp() {
    m_buffer.clear();
    m_stream.async_read_some(m_buffer.prepare(4096), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (!ec && !self->m_context.stopping.load()) return self->awaitClientGivingUp();
      if (auto ended = std::exchange(self->m_hangEnded, nullptr)) ended();
      self->close();
    });
  }

  Handled handle(const Request& sr) {
    try {
      return m_context.handler.handle(sr);
    } catch (const std::exception&) {
      Handled h;
      h.response = problemForStatus(500, sr.method, sr.path, m_context.docs);
      h.outcome = "error";
      return h;
    }
  }

  // A status for what the parser refused; its own refusals (field count, field size) are 431.
  int statusFor(const beast::error_code& ec) const {
    if (m_parser && m_parser->refusal() != RequestParser::Refusal::None) return 431;
    return statusForParseError(ec);
  }

  // Refuses what the limits do not allow: a problem body, then the connection closes (the
  // rest of the request was not read, so the stream cannot be trusted for another).
  void refuse(int status) {
    noteRefusedRequest();
    const std::string method = m_logMethod.empty() ? std::string("-") : m_logMethod;
    refuse(problemForStatus(status, method, m_logPath, m_context.docs));
  }
  void refuse(const http::Response& answerWith) {
    noteRefusedRequest();
    m_busy = true;
    m_parser.reset();
    m_body.release();
    m_lingering = true;
    answer(answerWith, {}, false, false);
  }
  void noteRefusedRequest() {
    if (m_parser && m_parser->is_header_done()) {
      m_logMethod = std::string(m_parser->get().method_string());
      m_logPath = std::string(m_parser->get().target());
    }
  }
  void refuseOverBudget() {
    if (m_context.stats) ++m_context.stats->refusedBodyBudget;
    refuse(retryLater(http::Problem::Overloaded,
                      "The server holds as many request-body bytes as its budget allows (--max-buffered-body); "
                      "retry shortly. Nothing was executed or stored.",
                      m_context.docs));
  }

  void answer(http::Response from, Handled handled, bool keepAlive, bool head) {
    m_busy = true;
    m_replyHold = std::move(handled.hold);  // kept until the answer is written
    try {
      buildReply(from);
    } catch (const std::exception& e) {
      // An answer Beast cannot carry (a header field over 64 KiB, a status past 999): the client
      // gets a 500 naming its request id, not a process that ends on the event loop.
      std::cerr << "idem endpoint: request " << m_requestId << ": answer could not be written: " << e.what() << '\n';
      if (m_context.stats) ++m_context.stats->loopExceptions;
      auto failed = internalError(m_requestId, "The answer could not be written.", m_context.docs);
      buildReply(failed);
      handled.outcome = "error";
    }
    m_reply.keep_alive(keepAlive && !m_context.stopping.load());
    m_reply.prepare_payload();
    if (head) m_reply.body().clear();  // Content-Length stays that of the GET answer
    // A handler without the GET's body (the proxy's HEAD) states the GET answer's length itself.
    if (const auto length = http::findHeader(from.headers, "Content-Length");
        head && length && static_cast<int>(m_reply.result_int()) == from.status)
      m_reply.set(bhttp::field::content_length, *length);
    log(static_cast<int>(m_reply.result_int()), handled, from);
    m_stream.expires_after(m_options.writeTimeout);
    if (head) {
      m_headSerializer.emplace(m_reply);
      bhttp::async_write_header(m_stream, *m_headSerializer,
                                [self = shared_from_this()](beast::error_code ec, std::size_t) { self->afterWrite(ec); });
      return;
    }
    bhttp::async_write(m_stream, m_reply,
                       [self = shared_from_this()](beast::error_code ec, std::size_t) { self->afterWrite(ec); });
  }

  // Takes `from`'s body (a replay's may be megabytes: moved, not copied); its status and headers stay.
  void buildReply(http::Response& from) {
    m_reply = Reply{};
    m_reply.version(11);
    m_reply.result(static_cast<unsigned>(from.status));
    for (const auto& [name, value] : from.headers) m_reply.insert(name, value);
    // Every answer, the HTTP layer's own refusals included, names the request for the log.
    if (m_reply.find("Request-Id") == m_reply.end()) m_reply.insert("Request-Id", m_requestId);
    m_reply.body() = std::move(from.body);
  }

  void afterWrite(beast::error_code ec) {
    m_headSerializer.reset();
    m_busy = false;
    const bool keepAlive = m_reply.keep_alive();
    m_reply = Reply{};  // a large answer's bytes are not kept while the connection idles
    m_replyHold.reset();
    if (!ec && m_lingering) return linger();
    if (ec || !keepAlive) return close();
    awaitNextRequest();
  }

  // After a refusal the client may still be sending the request it was refused for; closing at
  // once would reset the connection and could destroy the answer before the client reads it.
  // So: stop sending, discard what arrives for a short, bounded while, then close.
  void linger() {
    beast::error_code ignored;
    m_stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
    m_stream.expires_after(std::chrono::seconds(1));
    drain();
  }
  void drain() {
    m_buffer.clear();
    m_stream.async_read_some(m_buffer.prepare(4096), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      self->m_drained += n;
      if (ec || self->m_drained > kMaxDrainBytes) return self->close();
      self->drain();
    });
  }

  void log(int status, const Handled& h, const http::Response& response) {
    const double seconds = std::chrono::duration<double>(Clock::now() - m_started).count();
    const std::string outcome = h.outcome.empty() ? outcomeForStatus(status) : h.outcome;
    m_context.handler.metrics().observe(h.tier, outcome, status, seconds);
    if (!m_options.accessLog) return;
    LogRecord rec;
    rec.atMs = wallMs();
    rec.method = m_logMethod;
    rec.path = m_logPath;
    rec.status = status;
    rec.remote = m_remote;
    rec.requestId = m_requestId;
    rec.tier = h.tier;
    rec.outcome = outcome;
    rec.tenant = h.tenant;
    rec.key = h.key;
    rec.generation = h.generation;
    rec.resource = h.resource;
    rec.would = h.would;
    rec.detail = h.detail;
    const auto replayed = http::findHeader(response.headers, "Idempotent-Replayed");
    rec.replayed = replayed && *replayed == "true";
    rec.latencyMs = seconds * 1000.0;
    m_options.accessLog(formatLogLine(rec));
  }

  void close() {
    m_body.release();
    beast::error_code ignored;
    m_stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
    m_stream.close();
  }

  static constexpr std::size_t kIdleBufferBytes = std::size_t{8} * 1024;
  beast::tcp_stream m_stream;
  beast::flat_buffer m_buffer;
  BodyReservation m_body;  // this request's share of the server's body budget
  ConnectionContext& m_context;
  const TransportOptions& m_options;
  std::optional<Parser> m_parser;
  Reply m_reply;
  std::shared_ptr<const void> m_replyHold;  // the answer's share of a budget (Handled::hold)
  std::optional<bhttp::response_serializer<bhttp::string_body>> m_headSerializer;
  std::shared_ptr<bhttp::response<bhttp::empty_body>> m_continue;
  static constexpr std::size_t kMaxDrainBytes = std::size_t{4} * 1024 * 1024;
  bool m_busy = false;  // between a request's head and the end of its answer
  bool m_lingering = false;
  std::size_t m_drained = 0;
  Clock::time_point m_started;
  long long m_arrivedUs = 0;
  bool m_rawKeepAlive = false;          // the request a raw route took: kept alive, a HEAD
  bool m_rawHead = false;
  std::function<void()> m_hangEnded;    // a raw route's hang, until the client gives up
  std::string m_requestId;
  std::string m_remote;
  std::string m_peer;  // the address the connection was admitted under (its per-client count)
  std::string m_logMethod;
  std::string m_logPath;
};

ConnectionContext::Admission ConnectionContext::admit(const std::string& peer) {
  std::lock_guard lock(mutex);
  if (open.load() >= maxConnections) return Admission::ServerFull;
  int& fromPeer = perClient[peer];
  if (fromPeer >= maxPerClient) {
    if (fromPeer == 0) perClient.erase(peer);
    return Admission::ClientFull;
  }
  ++fromPeer;
  ++open;
  return Admission::Admitted;
}

void ConnectionContext::leave(const std::string& peer) {
  std::lock_guard lock(mutex);
  if (auto it = perClient.find(peer); it != perClient.end() && --it->second <= 0) perClient.erase(it);
  --open;
}

void serveConnection(boost::asio::ip::tcp::socket socket, ConnectionContext& context, std::string peer) {
  auto connection = std::make_shared<Connection>(std::move(socket), context);
  connection->setPeer(std::move(peer));
  connection->start();
}

void closeIdleConnections(ConnectionContext& context) {
  // Collected under the lock, posted outside it: the last reference may drop here, and the
  // destructor takes the same lock.
  std::vector<std::shared_ptr<Connection>> open;
  {
    std::lock_guard lock(context.mutex);
    for (const auto& entry : context.connections)
      if (auto c = entry.second.lock()) open.push_back(std::move(c));
  }
  for (auto& c : open) boost::asio::post(c->executor(), [c] { c->closeIfWaiting(); });
}

}  // namespace idem::server
