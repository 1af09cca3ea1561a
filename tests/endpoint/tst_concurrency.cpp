// 200 identical POSTs at once over 200 connections: exactly one execution (one ledger row);
// every other answer is a replay of it or a 409 while it runs. The listen backlog (raised
// from httplib's 5) must absorb the burst: no connection is refused.
#include <QtTest>
#include <atomic>
#include <barrier>
#include <thread>

#include "tests/endpoint/endpoint_support.h"

using namespace idem;

class TestConcurrency : public QObject {
  Q_OBJECT

 private slots:
  void twoHundredIdenticalPostsExecuteOnce() {
    test::LiveServer s("ep_concurrency");
    constexpr int kClients = 200;
    std::barrier start(kClients);
    std::vector<client::ClientResponse> answers(kClients);
    std::vector<std::thread> threads;
    for (int i = 0; i < kClients; ++i) {
      threads.emplace_back([&, i] {
        client::Client c("127.0.0.1", s.server->port());
        start.arrive_and_wait();
        // A short execution keeps the key processing while the burst arrives.
        auto h = test::jsonHeaders("burst-1");
        h.emplace_back("Sim-Delay-Ms", "200");
        answers[static_cast<std::size_t>(i)] = c.post("/v1/payments", h, test::kPayment);
      });
    }
    for (auto& t : threads) t.join();

    int executed = 0, replayed = 0, conflicts = 0;
    std::string executedBody;
    for (const auto& a : answers) {
      QVERIFY2(a.error.empty(), a.error.c_str());
      if (a.status == 201 && a.header("Idempotent-Replayed").empty()) {
        ++executed;
        executedBody = a.body;
      } else if (a.status == 201) {
        ++replayed;
      } else if (a.status == 409) {
        ++conflicts;
        QVERIFY(!a.header("Retry-After").empty());
      } else {
        QFAIL(("unexpected status " + std::to_string(a.status) + ": " + a.body).c_str());
      }
    }
    QCOMPARE(executed, 1);
    QCOMPARE(executed + replayed + conflicts, kClients);
    for (const auto& a : answers)
      if (a.status == 201) QCOMPARE(a.body, executedBody);
    QCOMPARE(s.ledgerRows("burst-1"), 1LL);
    qInfo("executed %d, replayed %d, 409 %d", executed, replayed, conflicts);
  }
};

QTEST_GUILESS_MAIN(TestConcurrency)
#include "tst_concurrency.moc"
