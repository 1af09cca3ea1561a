// How many write statements for new keys serve keeps in flight (--write-batches-in-flight,
// core/store/inflighttuner.h): adapting by default, fixed when told, refused when out of range;
// /metrics says which, and every concurrent new key is still executed once.
#include <QtTest>
#include <future>

#include "tests/endpoint/endpoint_support.h"
#include "tests/endpoint/serve_process.h"

using namespace idem;

class TestWriteBatching : public QObject {
  Q_OBJECT

 private slots:
  void aFixedCountIsWhatRunsAndWhatMetricsSay() {
    test::TestDatabase db("ep_writebatching");
    test::ServeProcess serve({"--db", db.conninfo(), "--threads", "32", "--write-batches-in-flight", "2"});
    client::Client c("127.0.0.1", serve.port());
    const auto before = c.get("/metrics").body;
    QCOMPARE(test::metricValue(before, "idem_write_batches_in_flight_limit"), 2LL);
    const std::string claimed = "idem_write_batch_keys_total{kind=\"claim\"}";
    const long long claimedBefore = test::metricValue(before, claimed);
    QVERIFY(claimedBefore >= 0);

    // 24 new keys at once through two slots: each executed once, each claimed once.
    constexpr int kKeys = 24;
    std::vector<std::future<int>> posts;
    for (int i = 0; i < kKeys; ++i)
      posts.push_back(std::async(std::launch::async, [&serve, i] {
        client::Client own("127.0.0.1", serve.port());
        return own.post("/v1/payments", test::jsonHeaders("wb-" + std::to_string(i)), test::kPayment).status;
      }));
    for (auto& p : posts) QCOMPARE(p.get(), 201);
    auto conn = db.connect();
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem_demo.ledger WHERE idem_key LIKE 'wb-%'").integer(0, "n"),
             static_cast<long long>(kKeys));
    const auto after = c.get("/metrics").body;
    QCOMPARE(test::metricValue(after, claimed) - claimedBefore, static_cast<long long>(kKeys));
    QCOMPARE(test::metricValue(after, "idem_write_batches_in_flight_limit"), 2LL);  // fixed: it never moves
  }

  void byDefaultItAdaptsFromEight() {
    test::TestDatabase db("ep_writebatching_auto");
    test::ServeProcess serve({"--db", db.conninfo()});
    client::Client c("127.0.0.1", serve.port());
    QCOMPARE(test::metricValue(c.get("/metrics").body, "idem_write_batches_in_flight_limit"), 8LL);
  }

  void aCountOutOfRangeIsRefusedNamingTheFlag() {
    for (const std::string bad : {"0", "65", "many", "-1"}) {
      std::string out;
      QCOMPARE(test::runIdemctl({"serve", "--db", "host=/nonexistent", "--write-batches-in-flight", bad}, &out), 2);
      QVERIFY2(out.find("--write-batches-in-flight must be auto or a whole number from 1 to 64") != std::string::npos,
               out.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestWriteBatching)
#include "tst_writebatching.moc"
