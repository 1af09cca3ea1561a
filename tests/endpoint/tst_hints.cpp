// The server's hints never lead an obedient client into a second execution: a real client
// library (urllib3, which sleeps the Retry-After of a 409 when told to retry it) retries a
// payment that is still running, and must end with the original's replay — one charge — while
// every Retry-After it was given points at a moment the key is still honoured.
#include <QProcess>
#include <QtTest>
#include <future>

#include "tests/endpoint/endpoint_support.h"

using namespace idem;

namespace {
// The incident's numbers: a 3s TTL and a 2.5s request; the lease is the policy's default.
const char* const kShortTtlPolicy = R"({"docs_url":"https://d/i","tenant_header":"Account-Id","tiers":[)"
                                    R"({"name":"payments","routes":["POST /v1/payments"],"ttl":"3s"}]})";
}  // namespace

class TestHints : public QObject {
  Q_OBJECT

 private slots:
  void retryAfterNeverLeadsPastExpiry() {
    test::LiveServer s("ep_hints", kShortTtlPolicy);
    auto original = std::async(std::launch::async, [&] {
      auto h = test::jsonHeaders("hint-1");
      h.emplace_back("Sim-Delay-Ms", "2500");
      return s.client()->post("/v1/payments", h, test::kPayment);
    });
    QThread::msleep(200);

    // The same payment retried by urllib3 (a client whose first attempt timed out, say).
    QProcess client;
    client.start("/usr/bin/python3",
                 {QString::fromStdString(test::dataPath("clients/urllib3_retry.py")),
                  QString::fromStdString(s.server->url() + "/v1/payments"), "hint-1",
                  QString::fromStdString(test::kPayment), "Account-Id:acct_1", "Sim-Delay-Ms:2500"});
    QVERIFY2(client.waitForFinished(30000), "the urllib3 client did not finish");
    const QByteArray err = client.readAllStandardError();
    QVERIFY2(client.exitCode() == 0, err.constData());  // needs Debian's python3-urllib3 (./run installs it)
    const auto out = nlohmann::json::parse(client.readAllStandardOutput().toStdString());
    qInfo("%s", out.dump().c_str());

    QCOMPARE(original.get().status, 201);
    QCOMPARE(out["final"]["status"].get<int>(), 201);
    QCOMPARE(out["final"]["replayed"].get<std::string>(), std::string("true"));
    QCOMPARE(s.ledgerRows("hint-1"), 1LL);
    QVERIFY2(!out["seen"].empty(), "the retry should have met the running original (409)");
    for (const auto& seen : out["seen"]) {
      QCOMPARE(seen["status"].get<int>(), 409);
      const double hintedAt = seen["at"].get<double>() + std::stod(seen["retry_after"].get<std::string>());
      // Idempotency-Expires is whole seconds, rounded down; 100 ms for the trip back to the client.
      QVERIFY2(hintedAt <= seen["expires"].get<double>() + 0.1,
               qPrintable(QString("Retry-After %1 points past Idempotency-Expires")
                              .arg(QString::fromStdString(seen["retry_after"].get<std::string>()))));
    }
  }
};

QTEST_GUILESS_MAIN(TestHints)
#include "tst_hints.moc"
