// The store stopped mid-test: 503 with Retry-After and nothing executed; started again: the
// same process recovers without being restarted. Runs on a private cluster it may stop.
#include <QtTest>

#include "core/store/migrations.h"
#include "tests/support/harness.h"
#include "tests/support/testdb.h"

using namespace idem;
using test::header;

class TestStoreOutage : public QObject {
  Q_OBJECT

 private slots:
  void unavailableStoreAnswers503ThenRecovers() {
    test::PrivateCluster pc;
    {
      pg::Connection admin(pc.conninfo());
      store::migrate(admin);
    }
    test::Harness h(pc.conninfo(), test::kTestPolicy, 4);
    int executions = 0;
    auto ok = h.roundTrip(test::Harness::post("/v1/payments", "k-before", R"({"a":1})"), 201, &executions);
    QCOMPARE(ok.status, 201);

    pc.cluster().stop();
    for (const char* key : {"k-before", "k-during"}) {
      auto r = h.roundTrip(test::Harness::post("/v1/payments", key, R"({"a":1})"), 201, &executions);
      QCOMPARE(r.status, 503);
      QCOMPARE(header(r, "Content-Type"), std::string("application/problem+json"));
      QVERIFY(std::stoi(header(r, "Retry-After")) >= 1);
    }
    QCOMPARE(executions, 1);  // nothing ran while the store was down

    pc.cluster().start();
    // The pooled connections died with the server; the first request after restart must
    // already succeed (stale connections are dropped and replaced).
    auto replay = h.roundTrip(test::Harness::post("/v1/payments", "k-before", R"({"a":1})"), 201, &executions);
    QCOMPARE(replay.status, 201);
    QCOMPARE(header(replay, "Idempotent-Replayed"), std::string("true"));
    auto fresh = h.roundTrip(test::Harness::post("/v1/payments", "k-during", R"({"a":1})"), 201, &executions);
    QCOMPARE(fresh.status, 201);
    QCOMPARE(executions, 2);
    QVERIFY(h.trace.flush());
  }
};

QTEST_GUILESS_MAIN(TestStoreOutage)
#include "tst_store_outage.moc"
