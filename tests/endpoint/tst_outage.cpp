// PostgreSQL stopped under a running endpoint: keyed requests and /healthz answer 503 with
// Retry-After and nothing executes; started again, the same server (no restart) recovers.
#include <QtTest>

#include "core/store/migrations.h"
#include "tests/endpoint/endpoint_support.h"

using namespace idem;

class TestOutage : public QObject {
  Q_OBJECT

 private slots:
  void storeDownThenBack() {
    test::PrivateCluster pc;
    {
      pg::Connection admin(pc.conninfo());
      store::migrate(admin, store::kDefaultLockTimeout, /*withDemo=*/true);  // serve writes the demo's ledger
    }
    endpoint::ServerOptions o;
    o.conninfo = pc.conninfo();
    o.policy = policy::parsePolicy(test::kEndpointPolicy, "endpoint-test-policy.json");
    o.threads = 8;
    o.poolSize = 4;
    endpoint::Server server(std::move(o));
    server.start();
    client::Client c("127.0.0.1", server.port());

    auto before = c.post("/v1/payments", test::jsonHeaders("k-before"), test::kPayment);
    QCOMPARE(before.status, 201);

    pc.cluster().stop();
    for (const char* key : {"k-before", "k-during"}) {
      auto r = c.post("/v1/payments", test::jsonHeaders(key), test::kPayment);
      QCOMPARE(r.status, 503);
      QCOMPARE(r.header("Content-Type"), std::string("application/problem+json"));
      QVERIFY(std::stoi(r.header("Retry-After")) >= 1);
      QVERIFY(test::parse(r)["type"].get<std::string>().ends_with("#store-unavailable"));
    }
    auto health = c.get("/healthz");
    QCOMPARE(health.status, 503);
    QVERIFY(!health.header("Retry-After").empty());
    // What is down, not libpq's message: that names the host or socket, the user and the database.
    QCOMPARE(test::parse(health)["status"], nlohmann::json("unavailable"));
    QCOMPARE(test::parse(health)["store"], nlohmann::json("unreachable"));
    for (const char* internal : {"socket", "/sock", "user", "postgres", "connection to server"})
      QVERIFY2(health.body.find(internal) == std::string::npos, health.body.c_str());
    QCOMPARE(c.get("/v1/payments?idempotency_key=k-before", test::jsonHeaders("")).status, 503);
    QCOMPARE(c.get("/metrics").status, 200);  // metrics do not need the store

    pc.cluster().start();
    auto replay = c.post("/v1/payments", test::jsonHeaders("k-before"), test::kPayment);
    QCOMPARE(replay.status, 201);
    QCOMPARE(replay.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(replay.body, before.body);
    auto fresh = c.post("/v1/payments", test::jsonHeaders("k-during"), test::kPayment);
    QCOMPARE(fresh.status, 201);
    QVERIFY(fresh.header("Idempotent-Replayed").empty());
    QCOMPARE(c.get("/healthz").status, 200);

    pg::Connection conn(pc.conninfo());
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem_demo.ledger").integer(0, "n"), 2LL);
    server.stop();
    server.wait();
  }
};

QTEST_GUILESS_MAIN(TestOutage)
#include "tst_outage.moc"
