// `idemctl serve` as a separate process: SIGKILL mid-request and restart gives the retry a
// consistent answer (409 while the dead execution's lease runs, then one takeover execution)
// and no duplicate ledger row; SIGTERM finishes the in-flight request and exits 0; a store
// without the schema is refused with a message saying to migrate; the clients' retries that
// reach a restarted server soon cost one statement each again.
#include <QtTest>
#include <fstream>
#include <future>

#include "tests/endpoint/endpoint_support.h"
#include "tests/endpoint/serve_process.h"

using namespace idem;

namespace {
const char* const kLeasePolicy = R"({"docs_url":"https://d/i","tenant_header":"Account-Id","tiers":[)"
                                 R"({"name":"payments","routes":["POST /v1/payments"],"ttl":"1h","lease":"2s"}]})";

std::string writePolicy() {
  const std::string path = "/tmp/idem-ep-crash-policy-" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << kLeasePolicy;
  return path;
}

long long metric(client::Client& c, const std::string& name) { return test::metricValue(c.get("/metrics").body, name); }
}  // namespace

class TestCrash : public QObject {
  Q_OBJECT

 private slots:
  void killedMidRequestThenRestarted() {
    test::TestDatabase db("ep_crash");
    const std::string policy = writePolicy();
    const std::vector<std::string> args{"--db", db.conninfo(), "--policy", policy, "--allow-fault-injection"};
    auto first = std::make_unique<test::ServeProcess>(args);
    auto doomed = std::async(std::launch::async, [port = first->port()] {
      client::Client c("127.0.0.1", port, std::chrono::seconds(10));
      auto h = test::jsonHeaders("crash-1");
      h.emplace_back("Sim-Delay-Ms", "10000");
      return c.post("/v1/payments", h, test::kPayment);
    });
    QThread::msleep(300);
    first->kill(SIGKILL);
    QVERIFY(doomed.get().status == 0);  // the client saw the connection die, no answer

    test::ServeProcess second(args);
    client::Client c("127.0.0.1", second.port());
    // The dead execution's lease (2s) is still running: a consistent 409 with Retry-After.
    auto during = c.post("/v1/payments", test::jsonHeaders("crash-1"), test::kPayment);
    QCOMPARE(during.status, 409);
    QVERIFY(std::stoi(during.header("Retry-After")) >= 1);
    // Retry as a client would until the lease runs out: then exactly one takeover execution.
    client::ClientResponse r;
    for (int i = 0; i < 50; ++i) {
      r = c.post("/v1/payments", test::jsonHeaders("crash-1"), test::kPayment);
      if (r.status != 409) break;
      QThread::msleep(100);
    }
    QCOMPARE(r.status, 201);
    QVERIFY(r.header("Idempotent-Replayed").empty());
    auto replay = c.post("/v1/payments", test::jsonHeaders("crash-1"), test::kPayment);
    QCOMPARE(replay.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(replay.body, r.body);

    auto conn = db.connect();
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem_demo.ledger WHERE idem_key = 'crash-1'").integer(0, "n"), 1LL);
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem.events WHERE idem_key = 'crash-1' AND outcome = "
                       "'lease_takeover'")
                 .integer(0, "n"),
             1LL);
    std::remove(policy.c_str());
  }

  void sigtermFinishesInFlightThenExits0() {
    test::TestDatabase db("ep_sigterm");
    test::ServeProcess serve({"--db", db.conninfo(), "--allow-fault-injection"});
    auto inFlight = std::async(std::launch::async, [port = serve.port()] {
      client::Client c("127.0.0.1", port);
      auto h = test::jsonHeaders("term-1");
      h.emplace_back("Sim-Delay-Ms", "1000");
      return c.post("/v1/payments", h, test::kPayment);
    });
    QThread::msleep(300);
    serve.kill(SIGTERM);
    QCOMPARE(inFlight.get().status, 201);
    QCOMPARE(serve.wait(), 0);
    auto conn = db.connect();
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem_demo.ledger WHERE idem_key = 'term-1'").integer(0, "n"), 1LL);
  }

  void retriesReachingARestartedServerAreReadFirstSoon() {
    test::TestDatabase db("ep_restart_storm");
    const std::vector<std::string> args{"--db", db.conninfo()};
    constexpr int kKeys = 200;  // more than a window of RecentKeys' lesson (128)
    auto key = [](int i) { return "storm-" + std::to_string(i); };
    std::vector<std::string> bodies;
    {
      test::ServeProcess first(args);
      client::Client c("127.0.0.1", first.port());
      for (int i = 0; i < kKeys; ++i) {
        auto r = c.post("/v1/payments", test::jsonHeaders(key(i)), test::kPayment);
        QCOMPARE(r.status, 201);
        bodies.push_back(r.body);
      }
      QCOMPARE(metric(c, "idem_claim_unseen_read_first"), 0LL);
      first.kill(SIGTERM);
      QCOMPARE(first.wait(), 0);
    }
    // The restarted server never saw these keys: it claims them first (two statements for a
    // replay) until the lesson's window is over, then reads them first (one statement).
    test::ServeProcess second(args);
    client::Client c("127.0.0.1", second.port());
    auto replay = [&](int i) {
      auto r = c.post("/v1/payments", test::jsonHeaders(key(i)), test::kPayment);
      return r.status == 201 && r.header("Idempotent-Replayed") == "true" && r.body == bodies[i];
    };
    for (int i = 0; i < 128; ++i) QVERIFY(replay(i));
    QCOMPARE(metric(c, "idem_claim_statements_total"), 256LL);
    QCOMPARE(metric(c, "idem_claim_unseen_read_first"), 1LL);
    for (int i = 128; i < kKeys; ++i) QVERIFY(replay(i));
    QCOMPARE(metric(c, "idem_claim_statements_total"), 256LL + (kKeys - 128));
    QCOMPARE(metric(c, "idem_claims_total"), static_cast<long long>(kKeys));
    auto conn = db.connect();
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem_demo.ledger WHERE idem_key LIKE 'storm-%'").integer(0, "n"),
             static_cast<long long>(kKeys));
  }

  void unmigratedStoreIsRefused() {
    test::TestDatabase db("ep_nomigrate", test::Schema::None);
    std::string out;
    const int rc = test::runIdemctl({"serve", "--db", db.conninfo(), "--listen", "127.0.0.1:0"}, &out);
    QCOMPARE(rc, 2);
    QVERIFY2(out.find("idemctl migrate") != std::string::npos, out.c_str());
  }
};

QTEST_GUILESS_MAIN(TestCrash)
#include "tst_crash.moc"
