#include "core/server/transport.h"

#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cerrno>
#include <iostream>
#include <thread>
#include <vector>

#include "core/server/connection.h"
#include "core/server/problems.h"

namespace idem::server {
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {
// Connections beyond the file descriptors the process may open would fail in accept() (and
// starve the host's own connections); the limit is kept below what the process may hold, after
// the descriptors set aside for the admin listener.
int connectionCeiling(int wanted, int reserved, int setAside) {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return wanted;
  const auto reserve = static_cast<rlim_t>(reserved) + 64 + static_cast<rlim_t>(setAside);  // store, trace, logs
  if (r.rlim_cur <= reserve + 16) return 16;
  return std::min<int>(wanted, static_cast<int>(std::min<rlim_t>(r.rlim_cur - reserve, 1 << 30)));
}

// accept() failing for want of descriptors (or kernel memory) fails again at once while the
// connection waits in the backlog: retried on a timer, not in a loop that spins a core.
bool outOfDescriptors(const boost::system::error_code& ec) {
  return ec == net::error::no_descriptors || ec.value() == ENFILE || ec == net::error::no_buffer_space ||
         ec == net::error::no_memory;
}
constexpr std::chrono::milliseconds kAcceptPause{100};

// A short answer for a connection refused at accept, written without waiting.
std::string refusalBytes(const http::Response& p, const char* reason) {
  std::string out = "HTTP/1.1 " + std::to_string(p.status) + " " + reason + "\r\n";
  for (const auto& [name, value] : p.headers) out.append(name).append(": ").append(value).append("\r\n");
  return out + "Connection: close\r\nContent-Length: " + std::to_string(p.body.size()) + "\r\n\r\n" + p.body;
}
}  // namespace

// The event loop, the listening sockets and what each one's connections share.
class Transport::Impl {
 public:
  // A couple of event-loop threads do all socket work (more would only contend on the loop);
  // the handler threads run the requests, which may block (on a store).
  explicit Impl(int threads) : io(loopThreads(threads)), handlers(static_cast<std::size_t>(threads)) {}
  static int loopThreads(int threads) {
    return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 2, std::max(2, threads));
  }
  struct Listener {
    explicit Listener(net::io_context& io) : acceptor(io), pause(io) {}
    tcp::acceptor acceptor;
    net::steady_timer pause;  // accepting waits on it at the descriptor limit
    std::unique_ptr<ConnectionContext> context;
    std::string serverFull, clientFull;  // the answers of a refused connection
  };
  net::io_context io;
  net::thread_pool handlers;
  /// The admin listener's handlers: /healthz and /metrics never queue behind application work.
  std::unique_ptr<net::thread_pool> adminHandlers;
  TransportStats stats;
  std::unique_ptr<BodyBudget> bodyBudget;
  std::vector<std::unique_ptr<Listener>> listeners;  // the main one first, then the admin's
  std::atomic<bool> stopRequested{false};

  /// Gives a listener what its connections share, and its budget.
  void equip(Listener& l, std::unique_ptr<ConnectionContext> context, int maxConnections, int maxPerClient) {
    context->maxConnections = maxConnections;
    context->maxPerClient = std::clamp(maxPerClient, 1, maxConnections);
    context->bodyBudget = bodyBudget.get();
    context->stats = &stats;
    const std::string& docs = context->docs;
    auto full = problemForStatus(503, "-", "", docs);
    full.headers.emplace_back("Retry-After", "1");
    l.serverFull = refusalBytes(full, "Service Unavailable");
    auto perClient = problem(http::Problem::TooManyConnections,
                             "This client address holds as many open connections as the server allows one client "
                             "(--max-connections-per-client); reuse or close one. Nothing was executed or stored.",
                             docs);
    perClient.headers.emplace_back("Retry-After", "1");
    l.clientFull = refusalBytes(perClient, "Too Many Requests");
    l.context = std::move(context);
  }

  /// Binds host:port (0: any free port) and returns the port.
  int listen(const std::string& host, int port) {
    const auto cannotListen = [&] {
      return StartError("cannot listen on " + host + ":" + std::to_string(port) +
                            " (address in use or not local); pick another address or port 0 for any free port",
                        2);
    };
    auto& l = *listeners.emplace_back(std::make_unique<Listener>(io));
    try {
      tcp::resolver resolver(io);
      const auto found =
          resolver.resolve(host, std::to_string(port), tcp::resolver::passive | tcp::resolver::numeric_service);
      if (found.empty()) throw cannotListen();
      const tcp::endpoint at = *found.begin();
      l.acceptor.open(at.protocol());
      l.acceptor.set_option(tcp::acceptor::reuse_address(true));
      l.acceptor.bind(at);
      l.acceptor.listen(1024);
      return l.acceptor.local_endpoint().port();
    } catch (const boost::system::system_error&) {
      throw cannotListen();
    }
  }

  void accept(Listener& l) {
    l.acceptor.async_accept(net::make_strand(io), [this, &l](boost::system::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !l.acceptor.is_open()) return;
      if (!ec) admit(l, std::move(socket));
      if (outOfDescriptors(ec)) return pauseAccepting(l);
      accept(l);  // a failed accept (a reset peer) must not end the loop
    });
  }

  void pauseAccepting(Listener& l) {
    ++stats.acceptPauses;
    l.pause.expires_after(kAcceptPause);
    l.pause.async_wait([this, &l](boost::system::error_code ec) {
      if (!ec && l.acceptor.is_open()) accept(l);
    });
  }

  void admit(Listener& l, tcp::socket socket) {
    boost::system::error_code ec;
    const auto peer = socket.remote_endpoint(ec);
    if (ec) return;  // gone already
    std::string address = peer.address().to_string();
    switch (l.context->admit(address)) {
      case ConnectionContext::Admission::Admitted:
        break;
      case ConnectionContext::Admission::ServerFull:
        ++stats.refusedServerFull;
        return refuseAtOnce(socket, l.serverFull);
      case ConnectionContext::Admission::ClientFull:
        ++stats.refusedClientFull;
        return refuseAtOnce(socket, l.clientFull);
    }
    // Without it a response written as head + body waits for the client's delayed ACK.
    socket.set_option(tcp::no_delay(true), ec);
    serveConnection(std::move(socket), *l.context, std::move(address));
  }

  // Over a limit: a short answer written without waiting, then close.
  static void refuseAtOnce(tcp::socket& socket, const std::string& answer) {
    boost::system::error_code ignored;
    socket.non_blocking(true, ignored);
    ::send(socket.native_handle(), answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }

  /// One event-loop thread. Nothing thrown by a completion handler may end the process: the
  /// connection whose handler threw is dropped with it (its socket closes), and the loop goes on.
  void runLoop() {
    for (;;) {
      try {
        io.run();
        return;
      } catch (const std::exception& e) {
        ++stats.loopExceptions;
        std::cerr << "idem endpoint: caught on the event loop, one connection closed: " << e.what() << '\n';
      } catch (...) {
        ++stats.loopExceptions;
        std::cerr << "idem endpoint: caught on the event loop, one connection closed\n";
      }
    }
  }

  void shutdown() {
    for (auto& l : listeners) {
      boost::system::error_code ignored;
      l->acceptor.close(ignored);
      l->pause.cancel();
      if (!l->context) continue;  // never attached
      l->context->stopping = true;
      l->context->handler.stopping();  // e.g. the proxy's late answers, which keep the loop busy
      closeIdleConnections(*l->context);
    }
  }
};

Transport::Transport(TransportOptions options)
    : m_options(std::move(options)), m_impl(std::make_unique<Impl>(std::max(2, m_options.threads))) {
  if (m_options.maxHeaderBytes > kMaxHeaderBytes)
    throw StartError("--max-header-bytes may be at most " + std::to_string(kMaxHeaderBytes) +
                         " (the HTTP parser keeps each header field under 64 KiB)",
                     2);
  if (m_options.maxBufferedBodyBytes == 0)
    m_options.maxBufferedBodyBytes = std::max<std::size_t>(64u << 20, 8 * m_options.maxBodyBytes);
  if (m_options.maxBufferedBodyBytes < m_options.maxBodyBytes)
    throw StartError("--max-buffered-body (" + std::to_string(m_options.maxBufferedBodyBytes) +
                         ") must be at least --max-body (" + std::to_string(m_options.maxBodyBytes) +
                         "): no request could be read",
                     2);
  m_impl->bodyBudget = std::make_unique<BodyBudget>(m_options.maxBufferedBodyBytes);
  m_impl->stats.bodyBudget = m_impl->bodyBudget.get();
}

Transport::~Transport() = default;

void Transport::listen() {
  m_port = m_impl->listen(m_options.host, m_options.port);
  if (m_options.adminPort >= 0) m_adminPort = m_impl->listen(m_options.adminHost, m_options.adminPort);
}

void Transport::attach(const Handlers& h) {
  const bool admin = m_options.adminPort >= 0;
  const int maxConnections =
      connectionCeiling(m_options.maxConnections, h.reservedDescriptors, admin ? kAdminConnections : 0);
  const int perClient = m_options.maxConnectionsPerClient > 0 ? m_options.maxConnectionsPerClient : maxConnections / 2;
  h.main.metrics().attachTransport(&m_impl->stats);
  auto context = std::make_unique<ConnectionContext>(m_options, h.main, m_impl->handlers, h.docsUrl);
  context->rawRoute = h.raw;
  m_impl->equip(*m_impl->listeners.at(0), std::move(context), maxConnections, perClient);
  if (admin && h.admin) {
    h.admin->metrics().attachTransport(&m_impl->stats);
    m_impl->adminHandlers = std::make_unique<net::thread_pool>(kAdminThreads);
    m_impl->equip(*m_impl->listeners.at(1),
                  std::make_unique<ConnectionContext>(m_options, *h.admin, *m_impl->adminHandlers, h.docsUrl),
                  kAdminConnections, kAdminConnectionsPerClient);
  }
}

std::string Transport::url() const { return "http://" + m_options.host + ":" + std::to_string(m_port); }

std::string Transport::adminUrl() const {
  return m_adminPort ? "http://" + m_options.adminHost + ":" + std::to_string(m_adminPort) : std::string();
}

const TransportStats& Transport::stats() const { return m_impl->stats; }

void Transport::run() {
  if (!m_impl->stopRequested.load()) {
    for (auto& l : m_impl->listeners)
      if (l->context) m_impl->accept(*l);
    const int threads = Impl::loopThreads(m_options.threads);
    std::vector<std::thread> loop;
    for (int i = 1; i < threads; ++i) loop.emplace_back([this] { m_impl->runLoop(); });
    m_impl->runLoop();
    for (auto& t : loop) t.join();
  }
  m_impl->handlers.join();
  if (m_impl->adminHandlers) m_impl->adminHandlers->join();
}

void Transport::stop() {
  if (m_impl->stopRequested.exchange(true)) return;
  net::post(m_impl->io, [impl = m_impl.get()] { impl->shutdown(); });
}

}  // namespace idem::server
