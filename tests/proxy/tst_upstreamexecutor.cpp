// The proxy's upstream client calls back on the executor the request was sent from — also when
// the kept-alive connection it reuses was opened by a request of another client connection (its
// own strand). Before, such a request's answer ran on the opener's strand while its timer ran on
// its own: two strands of one exchange, able to run at once on the two loop threads.
#include <QtTest>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "core/proxy/upstream.h"

using namespace idem;
namespace net = boost::asio;

namespace {

/// A keep-alive HTTP/1.1 upstream on loopback, in a thread: every request (no body) answered
/// "200 ok" on the same connection until the client closes it.
class KeepAliveUpstream {
 public:
  KeepAliveUpstream() {
    m_listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(m_listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(m_listener, 8) != 0)
      throw std::runtime_error("cannot listen on loopback");
    socklen_t len = sizeof addr;
    ::getsockname(m_listener, reinterpret_cast<sockaddr*>(&addr), &len);
    m_port = ntohs(addr.sin_port);
    m_thread = std::thread([this] { serve(); });
  }
  ~KeepAliveUpstream() {
    ::shutdown(m_listener, SHUT_RDWR);
    ::close(m_listener);
    m_thread.join();
  }
  KeepAliveUpstream(const KeepAliveUpstream&) = delete;
  KeepAliveUpstream& operator=(const KeepAliveUpstream&) = delete;

  [[nodiscard]] int port() const { return m_port; }
  [[nodiscard]] int connectionsAccepted() const { return m_accepted.load(); }

 private:
  void serve() {
    for (;;) {
      const int conn = ::accept(m_listener, nullptr, nullptr);
      if (conn < 0) return;
      ++m_accepted;
      std::string pending;
      char buf[4096];
      for (;;) {
        const ssize_t n = ::recv(conn, buf, sizeof buf, 0);
        if (n <= 0) break;
        pending.append(buf, static_cast<std::size_t>(n));
        for (auto end = pending.find("\r\n\r\n"); end != std::string::npos; end = pending.find("\r\n\r\n")) {
          pending.erase(0, end + 4);
          const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
          (void)::send(conn, answer.data(), answer.size(), MSG_NOSIGNAL);
        }
      }
      ::close(conn);
    }
  }

  int m_listener = -1;
  int m_port = 0;
  std::atomic<int> m_accepted{0};
  std::thread m_thread;
};

}  // namespace

class TestUpstreamExecutor : public QObject {
  Q_OBJECT

 private slots:
  void aReusedConnectionAnswersOnTheSendersStrand() {
    KeepAliveUpstream upstream;
    std::string error;
    auto url = proxy::parseUpstreamUrl("http://127.0.0.1:" + std::to_string(upstream.port()), error);
    QVERIFY2(url, error.c_str());
    // Two loop threads, as the server runs them; each client connection is a strand. The loop
    // outlives the client: the client's idle connection is a socket of the loop.
    net::io_context io;
    proxy::Upstream client(*url, proxy::UpstreamOptions{});
    auto work = net::make_work_guard(io);
    std::thread loopA([&] { io.run(); });
    std::thread loopB([&] { io.run(); });
    auto opener = net::make_strand(io);
    auto reuser = net::make_strand(io);

    const auto sendFrom = [&](const net::strand<net::io_context::executor_type>& strand) {
      auto answered = std::make_shared<std::promise<std::pair<int, bool>>>();
      net::post(strand, [&client, strand, answered] {
        client.send(proxy::UpstreamRequest{"GET", "/", {}, {}}, true, strand, [strand, answered](proxy::Sent sent) {
          answered->set_value({sent.answer.status, strand.running_in_this_thread()});
        });
      });
      auto future = answered->get_future();
      return future.wait_for(std::chrono::seconds(10)) == std::future_status::ready ? future.get()
                                                                                    : std::pair<int, bool>{-1, false};
    };
    const auto first = sendFrom(opener);
    const auto second = sendFrom(reuser);  // takes the connection the first one opened and gave back

    work.reset();
    io.stop();
    loopA.join();
    loopB.join();
    QCOMPARE(first.first, 200);
    QVERIFY(first.second);
    QCOMPARE(second.first, 200);
    QCOMPARE(client.connectionsReused(), 1LL);
    QCOMPARE(upstream.connectionsAccepted(), 1);
    QVERIFY2(second.second, "the reused connection answered on the strand of the request that opened it");
  }
};

QTEST_GUILESS_MAIN(TestUpstreamExecutor)
#include "tst_upstreamexecutor.moc"
