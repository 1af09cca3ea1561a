// A real HTTP client library retries a payment through `idemctl proxy`: Python's requests
// (Debian python3-requests) with urllib3's Retry, POST allowed, the same Idempotency-Key on every
// attempt. Its first attempt times out while the sample service charges; the retries meet the
// running charge (409, Retry-After obeyed) and then get its stored answer — one charge, counted
// by the service itself.
#include <QProcess>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "tests/proxy/proxy_support.h"

using namespace idem;
using test::kCharge;

class TestClientLibrary : public QObject {
  Q_OBJECT

 private slots:
  void requestsRetriesAPaymentAndGetsTheReplay() {
    test::ProxyRig rig("px_requests");
    QProcess client;
    // The charge takes 2 s; the client gives up reading after 0.5 s and retries the same request.
    client.start("/usr/bin/python3", {QString::fromStdString(test::dataPath("clients/requests_payment.py")),
                                      QString::fromStdString("http://127.0.0.1:" + std::to_string(rig.proxy->port()) +
                                                             "/v1/charges"),
                                      "pay-requests-1", QString::fromStdString(kCharge), "0.5",
                                      "X-Test-Sleep-Ms:2000"});
    QVERIFY2(client.waitForFinished(60000), "the requests client did not finish");
    const QByteArray err = client.readAllStandardError();
    QVERIFY2(client.exitCode() == 0, err.constData());  // needs Debian's python3-requests (./run installs it)
    const auto out = nlohmann::json::parse(client.readAllStandardOutput().toStdString());
    qInfo("%s", out.dump().c_str());

    QCOMPARE(out["final"]["status"].get<int>(), 201);
    QCOMPARE(out["final"]["replayed"].get<std::string>(), std::string("true"));
    QCOMPARE(out["final"]["key"].get<std::string>(), std::string("\"pay-requests-1\""));
    // The first attempt timed out (that is why the client retried), later ones met the running charge.
    QVERIFY(!out["attempts"].empty());
    QCOMPARE(out["attempts"][0]["error"].get<std::string>(), std::string("ReadTimeoutError"));
    for (std::size_t i = 1; i < out["attempts"].size(); ++i)
      QCOMPARE(out["attempts"][i]["status"].get<int>(), 409);
    // The answer the client finally got is the one charge the service made.
    const auto charged = nlohmann::json::parse(out["final"]["body"].get<std::string>());
    QVERIFY(charged["id"].get<std::string>().starts_with("ch_"));
    QCOMPARE(rig.upstream.executions("pay-requests-1"), 1);
    // And the trace has the execution and the replay the client got.
    for (int i = 0; i < 50 && rig.events("pay-requests-1", "replayed") == 0; ++i) QThread::msleep(100);
    QCOMPARE(rig.events("pay-requests-1", "executed"), 1LL);
    QVERIFY(rig.events("pay-requests-1", "replayed") >= 1);
  }
};

QTEST_GUILESS_MAIN(TestClientLibrary)
#include "tst_clientlibrary.moc"
