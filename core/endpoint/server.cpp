#include "core/endpoint/server.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <chrono>
#include <random>

#include "core/endpoint/accesslog.h"
#include "core/endpoint/problems.h"
#include "core/http/keyheader.h"
#include "core/store/migrations.h"
#include "core/store/policystore.h"

namespace idem::endpoint {
namespace {

using Clock = std::chrono::steady_clock;

// What the worker thread learned about the request it is answering, read by the logger that
// httplib calls on the same thread after writing the response (also for requests that never
// reached a handler: parse errors, 413).
struct RequestInfo {
  bool active = false;
  Clock::time_point started;
  std::string requestId;
  Handled handled;
};
thread_local RequestInfo t_info;

std::string newRequestId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "req_";
  for (int i = 0; i < 20; ++i) id += kHex[rng() % 16];
  return id;
}

long long wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// httplib adds the peer's address as pseudo-headers; they are not the client's headers.
bool pseudoHeader(const std::string& name) {
  return name == "REMOTE_ADDR" || name == "REMOTE_PORT" || name == "LOCAL_ADDR" || name == "LOCAL_PORT";
}

void toHttplib(const enforce::Response& from, httplib::Response& to) {
  to.status = from.status;
  std::string contentType;
  for (const auto& [name, value] : from.headers) {
    if (http::equalsIgnoreCase(name, "Content-Type")) {
      contentType = value;
      continue;
    }
    to.headers.emplace(name, value);
  }
  if (!contentType.empty()) {
    to.set_content(from.body, contentType);
  } else if (!from.body.empty()) {
    to.set_content(from.body, "application/octet-stream");
  }
}

std::string outcomeForStatus(int status) {
  switch (status) {
    case 400:
      return "bad_request";
    case 404:
      return "not_found";
    case 413:
      return "payload_too_large";
    case 414:
      return "uri_too_long";
    default:
      return status >= 500 ? "error" : "rejected";
  }
}

}  // namespace

// The httplib server plus the listening socket it created. The task queue hooks let stop()
// reach a server that was not running yet when stop() was called.
class Server::Impl {
 public:
  httplib::Server http;
  int listenFd = -1;
};

namespace {
class StoppableQueue final : public httplib::ThreadPool {
 public:
  StoppableQueue(std::size_t n, std::function<void()> check) : httplib::ThreadPool(n), m_check(std::move(check)) {}
  void enqueue(std::function<void()> fn) override {
    httplib::ThreadPool::enqueue(std::move(fn));
    m_check();
  }
  void on_idle() override { m_check(); }

 private:
  std::function<void()> m_check;
};
}  // namespace

Server::Server(ServerOptions options) : m_options(std::move(options)), m_impl(std::make_unique<Impl>()) {
  // 1. The store: reachable, migrated to this build's schema; record the policy in force.
  try {
    pg::Connection conn(m_options.conninfo);
    const int applied = store::appliedSchemaVersion(conn);
    const int expected = store::expectedSchemaVersion();
    if (applied < expected)
      throw StartError("the store's schema is at version " + std::to_string(applied) + " but this idemctl needs " +
                           std::to_string(expected) + ". Run `idemctl migrate --db \"...\"` with the same --db first.",
                       2);
    m_policyVersion = store::recordPolicy(conn, m_options.policy);
  } catch (const pg::Unavailable& e) {
    throw StartError(std::string("cannot reach the store: ") + e.what() + "Check --db or the PG* variables.", 3);
  }

  // 2. The socket: bound now so the port (0 = any) is known before the first request.
  auto& http = m_impl->http;
  http.set_socket_options([this](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    // Accepted sockets inherit it: without it a response written as head + body waits for the
    // client's delayed ACK (~40 ms per keep-alive request).
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    m_impl->listenFd = sock;
  });
  if (m_options.port == 0) {
    m_port = http.bind_to_any_port(m_options.host);
  } else {
    m_port = http.bind_to_port(m_options.host, m_options.port) ? m_options.port : -1;
  }
  if (m_port <= 0)
    throw StartError("cannot listen on " + m_options.host + ":" + std::to_string(m_options.port) +
                         " (address in use or not local); pick another --listen address or port 0 for any free port",
                     2);
  // httplib's compiled-in backlog is 5: a burst of connections would be refused. Calling
  // listen() again on the bound socket raises it (Linux updates the backlog in place).
  ::listen(m_impl->listenFd, 1024);

  // 3. The service, with problem links pointing at this server's published policy.
  policy::Policy published = m_options.policy;
  published.docsUrl = url() + "/idempotency";
  m_service = std::make_unique<Service>(
      m_options.conninfo, std::move(published), m_policyVersion,
      ServiceOptions{m_options.allowFaultInjection, m_options.poolSize, m_options.traceFlushInterval,
                     m_options.traceFoldAfter, m_options.preparedStatements});

  const int threads = std::max(2, m_options.threads);
  http.new_task_queue = [this, threads] { return new StoppableQueue(threads, [this] { checkStop(); }); };
  http.set_keep_alive_max_count(100000);
  http.set_keep_alive_timeout(5);
  http.set_read_timeout(10);
  http.set_write_timeout(10);
  http.set_idle_interval(0, 200'000);
  http.set_payload_max_length(m_options.maxBodyBytes);

  const std::string docs = m_service->policy().docsUrl;
  http.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    t_info = RequestInfo{};
    t_info.active = true;
    t_info.started = Clock::now();
    t_info.requestId = newRequestId();
    return httplib::Server::HandlerResponse::Unhandled;
  });
  auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    ServiceRequest sr;
    sr.method = req.method;
    sr.path = req.path;
    for (const auto& [k, v] : req.params) sr.query.emplace(k, v);
    for (const auto& [k, v] : req.headers)
      if (!pseudoHeader(k)) sr.headers.emplace_back(k, v);
    sr.body = req.body;
    sr.requestId = t_info.active ? t_info.requestId : newRequestId();
    Handled h = m_service->handle(sr);
    toHttplib(h.response, res);
    t_info.handled = std::move(h);
  };
  for (const char* pattern : {"/.*"}) {
    http.Get(pattern, handler);
    http.Post(pattern, handler);
    http.Put(pattern, handler);
    http.Patch(pattern, handler);
    http.Delete(pattern, handler);
  }
  // Statuses httplib answers by itself (unparsable request, body over the limit) get a
  // problem+json body like every other error.
  http.set_error_handler(
      httplib::Server::HandlerWithResponse([docs](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        auto p = problemForStatus(res.status, req.method, req.path, docs);
        res.set_content(p.body, "application/problem+json");
        if (res.status == 400 || res.status == 413 || res.status == 414) res.set_header("Connection", "close");
        return httplib::Server::HandlerResponse::Handled;
      }));
  http.set_exception_handler([docs](const httplib::Request& req, httplib::Response& res, std::exception_ptr) {
    auto p = problemForStatus(500, req.method, req.path, docs);
    res.status = 500;
    res.set_content(p.body, "application/problem+json");
  });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    LogRecord rec;
    rec.atMs = wallMs();
    rec.method = req.method;
    rec.path = req.path;
    rec.status = res.status;
    rec.remote = req.remote_addr;
    double seconds = 0;
    if (t_info.active) {
      seconds = std::chrono::duration<double>(Clock::now() - t_info.started).count();
      rec.requestId = t_info.requestId;
    }
    const Handled& h = t_info.handled;
    rec.tier = h.tier;
    rec.outcome = h.outcome.empty() ? outcomeForStatus(res.status) : h.outcome;
    rec.tenant = h.tenant;
    rec.key = h.key;
    rec.generation = h.generation;
    rec.resource = h.resource;
    rec.replayed = res.get_header_value("Idempotent-Replayed") == "true";
    rec.latencyMs = seconds * 1000.0;
    t_info = RequestInfo{};
    m_service->metrics().observe(rec.tier, rec.outcome, rec.status, seconds);
    if (m_options.accessLog) m_options.accessLog(formatLogLine(rec));
  });
}

Server::~Server() {
  stop();
  wait();
}

std::string Server::url() const { return "http://" + m_options.host + ":" + std::to_string(m_port); }

void Server::checkStop() {
  if (m_stopRequested.load()) m_impl->http.stop();
}

void Server::run() {
  if (!m_stopRequested.load()) m_impl->http.listen_after_bind();
  // listen_after_bind() returns after the worker threads finished their connections.
  m_service->flushTrace();
}

void Server::start() {
  m_thread = std::thread([this] { run(); });
}

void Server::stop() {
  m_stopRequested = true;
  m_impl->http.stop();
}

void Server::wait() {
  if (m_thread.joinable()) m_thread.join();
}

}  // namespace idem::endpoint
