// The transport's checks against a real `idemctl serve` over raw loopback sockets, where a
// client library would not go: the header size the parser can honour, trailer fields that must
// never become headers, method names in the wrong case, and one client address that must not
// take every connection slot.
#include <QProcess>
#include <QtTest>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/endpoint/endpoint_support.h"
#include "tests/endpoint/raw_http.h"
#include "tests/endpoint/serve_process.h"

using namespace idem;
using namespace std::chrono_literals;
using test::exchange;
using test::bodyOf;
using test::chunkedWithTrailers;
using test::statusOf;

namespace {



std::string payment(const std::string& method, const std::string& key, const std::string& tenant) {
  return method + " /v1/payments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccount-Id: " + tenant +
         "\r\nIdempotency-Key: " + key + "\r\nContent-Length: " + std::to_string(test::kPayment.size()) +
         "\r\nConnection: close\r\n\r\n" + test::kPayment;
}

// Runs idemctl with arguments that must not start a server: its exit code and stderr.
std::pair<int, std::string> refusedStart(const QStringList& args) {
  QProcess p;
  p.start(QString::fromLocal8Bit(qgetenv("IDEMCTL")), args);
  if (!p.waitForFinished(20000)) {
    p.kill();
    p.waitForFinished();
    return {-1, "still running: it started"};
  }
  return {p.exitCode(), p.readAllStandardError().toStdString()};
}
}  // namespace

class TestFrontLimits : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<test::ServeProcess> m_serve;

  int port() const { return m_serve->port(); }
  long long keyRows(const std::string& key) {
    auto c = m_db->connect();
    return c.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key = $1", {key}).integer(0, "n");
  }
  void assertStillServing() {
    QVERIFY2(m_serve->alive(), "idemctl serve died");
    QCOMPARE(statusOf(exchange(port(), test::kHealthRequest)), 200);
  }

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ep_frontlimits");
    m_serve = std::make_unique<test::ServeProcess>(
        std::vector<std::string>{"--db", m_db->conninfo(), "--max-headers", "12", "--max-header-bytes", "65536"});
  }
  void cleanupTestCase() {
    m_serve.reset();
    m_db.reset();
  }

  // #3: Beast keeps a field's length in 16 bits; a 70 000-byte field under a 1 MiB limit threw
  // through the event loop and ended the process. The limit the flag accepts is what the parser
  // can store, and a start with more says so.
  void headerLimitIsWhatTheParserHolds() {
    const auto [code, err] = refusedStart({"serve", "--db", QString::fromStdString(m_db->conninfo()),
                                           "--max-header-bytes", "1048576", "--access-log", "off"});
    QVERIFY2(code == 2, err.c_str());
    QVERIFY2(err.find("--max-header-bytes") != std::string::npos && err.find("65536") != std::string::npos,
             err.c_str());
    // At the largest limit: a 70 000-byte field is 431 and the process lives; a 60 000-byte one is served.
    const std::string over = exchange(port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(70'000, 'b') +
                                                  "\r\nConnection: close\r\n\r\n");
    QVERIFY2(statusOf(over) == 431, over.substr(0, 300).c_str());
    assertStillServing();
    const std::string under = exchange(port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " +
                                                   std::string(60'000, 'b') + "\r\nConnection: close\r\n\r\n");
    QCOMPARE(statusOf(under), 200);
  }

  // #4: a tenant sent only as a trailer, after the header checks, listed another tenant's ledger.
  void trailerIsNeverATenant() {
    const std::string paid = exchange(port(), payment("POST", "trailer-victim", "acct_victim"));
    QCOMPARE(statusOf(paid), 201);
    const std::string id = nlohmann::json::parse(bodyOf(paid)).value("id", "");
    QVERIFY(!id.empty());
    const std::string listed = exchange(
        port(), chunkedWithTrailers("GET /v1/payments?idempotency_key=trailer-victim HTTP/1.1\r\nHost: x\r\n", "",
                                    "Account-Id: acct_victim\r\n"));
    QVERIFY2(statusOf(listed) != 0, "no answer");
    QVERIFY2(listed.find(id) == std::string::npos, ("another tenant's payment listed: " + listed).c_str());
    // The same list with the tenant as a header does find it (the request above was otherwise right).
    const std::string own =
        exchange(port(), "GET /v1/payments?idempotency_key=trailer-victim HTTP/1.1\r\nHost: x\r\nAccount-Id: "
                         "acct_victim\r\nConnection: close\r\n\r\n");
    QVERIFY2(own.find(id) != std::string::npos, own.c_str());
  }

  // Trailer fields count against --max-headers (12 here): 6 header fields and 8 trailers are 431,
  // and nothing is claimed; the same request without trailers is served.
  void trailersCountAgainstTheHeaderLimit() {
    const std::string head =
        "POST /v1/payments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccount-Id: acct_1\r\n"
        "Idempotency-Key: trailer-many\r\n";
    std::string trailers;
    for (int i = 0; i < 8; ++i) trailers += "X-T" + std::to_string(i) + ": v\r\n";
    const std::string refused = exchange(port(), chunkedWithTrailers(head, test::kPayment, trailers));
    QVERIFY2(statusOf(refused) == 431, refused.substr(0, 400).c_str());
    QCOMPARE(keyRows("trailer-many"), 0LL);
    QCOMPARE(statusOf(exchange(port(), chunkedWithTrailers(head, test::kPayment, "X-T: one\r\n"))), 201);
    QCOMPARE(keyRows("trailer-many"), 1LL);
    // A trailer block past --max-header-bytes is refused too (the header block alone is small).
    const std::string big = exchange(
        port(), chunkedWithTrailers(head, test::kPayment,
                                    "X-Big1: " + std::string(33'000, 't') + "\r\nX-Big2: " + std::string(33'000, 't') +
                                        "\r\n"));
    QVERIFY2(statusOf(big) == 431, big.substr(0, 300).c_str());
    assertStillServing();
  }

  // #13: method names are case-sensitive (RFC 9110 §9.1). "post" is not POST: refused at the
  // transport with a problem naming the rule, before anything is claimed or executed.
  void methodInWrongCaseIsRefused_data() {
    QTest::addColumn<QString>("method");
    QTest::newRow("post") << "post";
    QTest::newRow("Post") << "Post";
    QTest::newRow("pOST") << "pOST";
  }
  void methodInWrongCaseIsRefused() {
    QFETCH(QString, method);
    const std::string key = "case-" + method.toStdString();
    const std::string r = exchange(port(), payment(method.toStdString(), key, "acct_1"));
    QVERIFY2(statusOf(r) == 400, r.substr(0, 400).c_str());
    const auto problem = nlohmann::json::parse(bodyOf(r), nullptr, false);
    QVERIFY2(problem.value("type", "").ends_with("#method-case"), r.c_str());
    QVERIFY2(problem.value("detail", "").find("RFC 9110") != std::string::npos, r.c_str());
    QCOMPARE(keyRows(key), 0LL);
    QCOMPARE(statusOf(exchange(port(), payment("POST", key, "acct_1"))), 201);
    assertStillServing();
  }

  // #9: one client address cannot take every connection slot. At --max-connections 64 the
  // default per-client share is 32: client A's other connections are refused with 429 and
  // Retry-After, and a second client (127.0.0.2) is still served.
  void oneClientCannotTakeEverySlot() {
    test::ServeProcess s({"--db", m_db->conninfo(), "--max-connections", "64"});
    std::vector<std::unique_ptr<test::RawConnection>> a;
    for (int i = 0; i < 64; ++i) a.push_back(std::make_unique<test::RawConnection>(s.port()));
    std::this_thread::sleep_for(300ms);  // all accepted or refused by now
    int refused = 0;
    std::string sample;
    for (auto& c : a) {
      const std::string r = c->response(20ms);
      if (statusOf(r) == 429) {
        ++refused;
        sample = r;
      }
    }
    QVERIFY2(refused == 64 - 32, ("refused " + std::to_string(refused) + " of 64").c_str());
    QVERIFY2(sample.find("Retry-After: 1") != std::string::npos, sample.c_str());
    const std::string other = exchange(s.port(), test::kHealthRequest, 3s, "127.0.0.2");
    QVERIFY2(statusOf(other) == 200, ("another client: " + other.substr(0, 300)).c_str());
    const std::string metrics =
        exchange(s.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 3s, "127.0.0.3");
    QCOMPARE(test::metricValue(metrics, "idem_http_client_connections_refused_total"), 32LL);
  }

  // The admin listener has a budget of its own: with every application slot taken (by clients
  // allowed that many), its /healthz still answers.
  void adminListenerKeepsItsOwnBudget() {
    test::ServeProcess s({"--db", m_db->conninfo(), "--max-connections", "16", "--max-connections-per-client", "16",
                          "--admin-listen", "127.0.0.1:0"});
    QVERIFY2(s.adminPort() > 0, s.banner().c_str());
    std::vector<std::unique_ptr<test::RawConnection>> held;
    for (int i = 0; i < 16; ++i) held.push_back(std::make_unique<test::RawConnection>(s.port()));
    std::this_thread::sleep_for(300ms);
    QCOMPARE(statusOf(exchange(s.port(), test::kHealthRequest, 3s, "127.0.0.2")), 503);
    QCOMPARE(statusOf(exchange(s.adminPort(), test::kHealthRequest, 3s)), 200);
  }

  // Class of #3: nothing thrown on the event loop ends the process. A handler whose answer
  // carries a field Beast cannot hold (over 64 KiB) made the write path throw out of io.run();
  // now that request gets a 500 naming its id, and the server goes on serving.
  void anAnswerBeastCannotCarryIs500() {
    struct OversizedAnswer : gate::Execution {
      Thread thread() const override { return Thread::Handlers; }
      void run(const gate::CallPtr& call) override {
        gate::Result result;
        result.response.status = 200;
        if (call->request().path == "/huge") result.response.headers.emplace_back("X-Huge", std::string(70'000, 'h'));
        call->finish(std::move(result));
      }
    };
    endpoint::ServerOptions o;
    o.conninfo = m_db->conninfo();
    o.policy = policy::parsePolicy(test::kEndpointPolicy, "endpoint-test-policy.json");
    o.threads = 2;
    o.execution = [](gate::Host&) { return std::make_unique<OversizedAnswer>(); };
    endpoint::Server server(std::move(o));
    server.start();
    const std::string r = exchange(server.port(), "GET /huge HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    QVERIFY2(statusOf(r) == 500, r.substr(0, 300).c_str());
    QVERIFY(r.find("Request-Id: req_") != std::string::npos);
    QCOMPARE(statusOf(exchange(server.port(), "GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")), 200);
  }

  // #1, transport half: with both handler threads of `serve --threads 2` held by slow requests,
  // the main port's /healthz waits for a thread, and the admin listener's answers at once: it
  // runs on threads of its own.
  void adminPlaneNeverWaitsBehindApplicationWork() {
    test::ServeProcess s({"--db", m_db->conninfo(), "--threads", "2", "--allow-fault-injection", "--admin-listen",
                          "127.0.0.1:0"});
    std::vector<std::future<std::string>> slow;
    for (int i = 0; i < 4; ++i)
      slow.push_back(std::async(std::launch::async, [&s, i] {
        const std::string key = "slow-" + std::to_string(i);
        return exchange(s.port(),
                        "POST /v1/payments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccount-Id: "
                        "acct_1\r\nSim-Delay-Ms: 4000\r\nIdempotency-Key: " +
                            key + "\r\nContent-Length: " + std::to_string(test::kPayment.size()) +
                            "\r\nConnection: close\r\n\r\n" + test::kPayment,
                        20s);
      }));
    std::this_thread::sleep_for(700ms);
    QCOMPARE(statusOf(exchange(s.port(), test::kHealthRequest, 1s)), 0);  // saturated: no thread for it within 1 s
    const auto start = std::chrono::steady_clock::now();
    const std::string health = exchange(s.adminPort(), test::kHealthRequest, 10s);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    QVERIFY2(statusOf(health) == 200, health.c_str());
    QVERIFY2(took < 1500ms, ("admin /healthz took " + std::to_string(took.count()) + " ms").c_str());
    QCOMPARE(statusOf(exchange(s.adminPort(), "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")),
             200);
    for (auto& f : slow) QCOMPARE(statusOf(f.get()), 201);
  }
};

QTEST_GUILESS_MAIN(TestFrontLimits)
#include "tst_frontlimits.moc"
