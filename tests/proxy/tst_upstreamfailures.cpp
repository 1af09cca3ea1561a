// What an upstream failure means for a key (README "idemctl proxy", upstream failures), from the
// service's own count: refused before sending releases the key and the retry executes once;
// killed mid-request or never answering never leads to a second execution; an answer that comes
// after the proxy's timeout is stored and replayed; one that never comes is recorded as
// outcome_unknown.
#include <QtTest>
#include <future>

#include "tests/proxy/proxy_support.h"

using namespace idem;
using test::charge;
using test::kCharge;

namespace {
client::ClientResponse postLater(int port, http::Headers h, std::chrono::milliseconds timeout) {
  client::Client c("127.0.0.1", port, timeout);
  return c.post("/v1/charges", h, kCharge);
}
}  // namespace

class TestUpstreamFailures : public QObject {
  Q_OBJECT

 private slots:
  void refusedReleasesTheKeyAndTheRetryExecutesOnce() {
    test::ProxyRig rig("px_refused");
    rig.upstream.kill9();  // nothing listens on its port now
    auto c = rig.client();
    const auto refused = c->post("/v1/charges", charge("ref-1"), kCharge);
    QCOMPARE(refused.status, 502);
    QCOMPARE(refused.header("Content-Type"), std::string("application/problem+json"));
    QVERIFY(!refused.header("Retry-After").empty());
    QVERIFY(refused.body.find("nothing was executed") != std::string::npos);
    QCOMPARE(rig.upstream.executions("ref-1"), 0);
    // The key was released, not left processing: the retry runs at once, and only once.
    rig.upstream.restart();
    const auto retried = c->post("/v1/charges", charge("ref-1"), kCharge);
    QCOMPARE(retried.status, 201);
    QVERIFY(retried.header("Idempotent-Replayed").empty());
    QCOMPARE(c->post("/v1/charges", charge("ref-1"), kCharge).header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(rig.upstream.executions("ref-1"), 1);
    QTRY_COMPARE_WITH_TIMEOUT(rig.events("ref-1", "released"), 1LL, 5000);
  }

  void killedMidRequestNeverExecutesTwice() {
    test::ProxyRig rig("px_killed");
    auto doomed = std::async(std::launch::async, postLater, rig.proxy->port(),
                             charge("kill-1", {{"X-Test-Sleep-Ms", "5000"}}), std::chrono::seconds(20));
    QTRY_COMPARE_WITH_TIMEOUT(rig.upstream.executions("kill-1"), 1, 5000);  // the charge ran
    rig.upstream.kill9();                                                   // ... and the service died before answering
    const auto first = doomed.get();
    QCOMPARE(first.status, 502);
    QVERIFY(first.body.find("may or may not have executed") != std::string::npos);
    rig.upstream.restart();
    auto c = rig.client();
    for (int i = 0; i < 3; ++i) {
      const auto again = c->post("/v1/charges", charge("kill-1"), kCharge);
      QCOMPARE(again.status, 502);  // the stored problem, never a second charge
      QCOMPARE(again.header("Idempotent-Replayed"), std::string("true"));
    }
    QCOMPARE(rig.upstream.executions("kill-1"), 1);
    QTRY_COMPARE_WITH_TIMEOUT(rig.events("kill-1", "outcome_unknown"), 1LL, 5000);
    QCOMPARE(rig.events("kill-1", "executed"), 0LL);
  }

  void lateAnswerIsStoredAndReplayed() {
    test::ProxyRig rig("px_late", {"--upstream-timeout", "1s", "--late-answer-wait", "20s"});
    auto c = rig.client();
    const auto first = c->post("/v1/charges", charge("late-1", {{"X-Test-Sleep-Ms", "3000"}}), kCharge);
    QCOMPARE(first.status, 504);
    QCOMPARE(first.header("Idempotency-Key"), std::string("\"late-1\""));
    // The upstream is still working on it: retries get 409, nothing runs again.
    const auto during = c->post("/v1/charges", charge("late-1"), kCharge);
    QCOMPARE(during.status, 409);
    QVERIFY(!during.header("Retry-After").empty());
    client::ClientResponse after;
    QTRY_VERIFY_WITH_TIMEOUT((after = c->post("/v1/charges", charge("late-1"), kCharge)).status == 201, 10000);
    QCOMPARE(after.header("Idempotent-Replayed"), std::string("true"));
    QVERIFY(after.body.find("\"object\":\"charges\"") != std::string::npos);
    QCOMPARE(rig.upstream.executions("late-1"), 1);
  }

  void leaseOutlivedWhileAwaitingNeverReexecutes() {
    // The short tier's lease is 1s and its TTL 2s; the upstream takes 4s. Without renewal a
    // retry would take the key over (or find it expired) and charge again.
    test::ProxyRig rig("px_lease", {"--upstream-timeout", "500ms", "--late-answer-wait", "20s"});
    auto c = rig.client();
    QCOMPARE(c->post("/v1/short", charge("lease-1", {{"X-Test-Sleep-Ms", "4000"}}), kCharge).status, 504);
    for (int i = 0; i < 6; ++i) {
      QThread::msleep(500);
      const auto r = c->post("/v1/short", charge("lease-1"), kCharge);
      QVERIFY2(r.status == 409, std::to_string(r.status).c_str());
    }
    QCOMPARE(rig.upstream.executions("lease-1"), 1);
  }

  void stoppingWhileAnAnswerIsAwaitedStoresOutcomeUnknown() {
    test::ProxyRig rig("px_stopwait", {"--upstream-timeout", "500ms", "--late-answer-wait", "60s"});
    QCOMPARE(rig.client()->post("/v1/charges", charge("stop-1", {{"X-Test-Sleep-Ms", "6000"}}), kCharge).status, 504);
    const auto stopping = std::chrono::steady_clock::now();
    rig.proxy->kill(SIGTERM);
    QCOMPARE(rig.proxy->wait(), 0);
    QVERIFY(std::chrono::steady_clock::now() - stopping < std::chrono::seconds(4));  // not the 60 s bound
    // The next proxy finds the key settled, not processing under a lease that would run out.
    rig.startProxy({});
    const auto after = rig.client()->post("/v1/charges", charge("stop-1"), kCharge);
    QCOMPARE(after.status, 504);
    QCOMPARE(after.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(rig.events("stop-1", "outcome_unknown"), 1LL);
    QCOMPARE(rig.upstream.executions("stop-1"), 1);
  }

  void neverAnsweringIsOutcomeUnknown() {
    test::ProxyRig rig("px_silent", {"--upstream-timeout", "500ms", "--late-answer-wait", "1s"});
    auto c = rig.client();
    QCOMPARE(c->post("/v1/charges", charge("silent-1", {{"X-Test-Sleep-Ms", "8000"}}), kCharge).status, 504);
    client::ClientResponse stored;
    QTRY_VERIFY_WITH_TIMEOUT((stored = c->post("/v1/charges", charge("silent-1"), kCharge)).status != 409, 8000);
    QCOMPARE(stored.status, 504);
    QCOMPARE(stored.header("Idempotent-Replayed"), std::string("true"));
    QVERIFY(stored.body.find("outcome-unknown") != std::string::npos);
    QTRY_COMPARE_WITH_TIMEOUT(rig.events("silent-1", "outcome_unknown"), 1LL, 5000);
    // The service's late answer changes nothing: the charge ran once, the stored problem stays.
    QThread::msleep(500);
    QCOMPARE(rig.upstream.executions("silent-1"), 1);
    QCOMPARE(c->post("/v1/charges", charge("silent-1"), kCharge).status, 504);
  }
};

QTEST_GUILESS_MAIN(TestUpstreamFailures)
#include "tst_upstreamfailures.moc"
