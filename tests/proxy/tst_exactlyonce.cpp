// `idemctl proxy` in front of a real Flask service, counted from the service's side: a storm of
// identical requests runs the charge once, retries after it replay its answer, a different body
// under the key is a 422, a retry after expiry follows the tier's on_expired rule, and an
// upstream 5xx follows the tier's cache rule.
#include <QtTest>
#include <atomic>
#include <thread>

#include "tests/proxy/proxy_support.h"

using namespace idem;
using test::charge;
using test::kCharge;

class TestExactlyOnce : public QObject {
  Q_OBJECT

 private slots:
  void stormOfIdenticalPostsExecutesOnce() {
    test::ProxyRig rig("px_storm", {"--threads", "64"});
    // The first request holds the key for a while, so the storm meets it in every state.
    constexpr int kClients = 200;
    std::atomic<int> created{0}, conflicts{0}, replays{0}, other{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.emplace_back([&, i] {
        client::Client c("127.0.0.1", rig.proxy->port(), std::chrono::seconds(30));
        http::Headers h = charge("storm-1");
        if (i == 0) h.emplace_back("X-Test-Sleep-Ms", "300");
        const auto r = c.post("/v1/charges", h, kCharge);
        if (r.status == 201 && r.header("Idempotent-Replayed") == "true")
          ++replays;
        else if (r.status == 201)
          ++created;
        else if (r.status == 409)
          ++conflicts;
        else
          ++other;
      });
    }
    for (auto& t : clients) t.join();
    QCOMPARE(rig.upstream.executions("storm-1"), 1);  // the service's own count
    QCOMPARE(created.load(), 1);
    QCOMPARE(other.load(), 0);
    QCOMPARE(created + conflicts + replays, kClients);
  }

  void retriesAfterCompletionReplay() {
    test::ProxyRig rig("px_replay");
    auto c = rig.client();
    const auto first = c->post("/v1/charges", charge("replay-1"), kCharge);
    QCOMPARE(first.status, 201);
    QVERIFY(first.header("Idempotent-Replayed").empty());
    QVERIFY(!first.header("Set-Cookie").empty());  // the first answer is the upstream's, whole
    for (int i = 0; i < 3; ++i) {
      const auto again = c->post("/v1/charges", charge("replay-1"), kCharge);
      QCOMPARE(again.status, 201);
      QCOMPARE(again.header("Idempotent-Replayed"), std::string("true"));
      QCOMPARE(again.body, first.body);
      QCOMPARE(again.header("Location"), first.header("Location"));
      QVERIFY(again.header("Set-Cookie").empty());  // not on the policy's allow-list
      QCOMPARE(again.header("Idempotency-Key"), std::string("\"replay-1\""));
      QVERIFY(!again.header("Idempotency-Expires").empty());
    }
    QCOMPARE(rig.upstream.executions("replay-1"), 1);
  }

  void differentBodySameKeyIs422() {
    test::ProxyRig rig("px_mismatch");
    auto c = rig.client();
    QCOMPARE(c->post("/v1/charges", charge("mm-1"), kCharge).status, 201);
    const auto other = c->post("/v1/charges", charge("mm-1"), R"({"amount":2000,"currency":"usd"})");
    QCOMPARE(other.status, 422);
    QCOMPARE(other.header("Content-Type"), std::string("application/problem+json"));
    // Key order and spacing are not a different payload under the json fingerprint.
    const auto same = c->post("/v1/charges", charge("mm-1"), R"({ "currency": "usd", "amount": 1000 })");
    QCOMPARE(same.status, 201);
    QCOMPARE(same.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(rig.upstream.executions("mm-1"), 1);
  }

  void retryAfterExpiryFollowsThePolicy() {
    test::ProxyRig rig("px_expiry");
    auto c = rig.client();
    QCOMPARE(c->post("/v1/short", charge("exp-1"), kCharge).status, 201);     // on_expired: reject
    QCOMPARE(c->post("/v1/renewals", charge("exp-2"), kCharge).status, 201);  // on_expired: execute
    QThread::msleep(2600);                                                    // both tiers' TTL is 2s
    const auto rejected = c->post("/v1/short", charge("exp-1"), kCharge);
    QCOMPARE(rejected.status, 422);
    QVERIFY(rejected.body.find("key expired") != std::string::npos);
    QCOMPARE(rig.upstream.executions("exp-1"), 1);
    const auto renewed = c->post("/v1/renewals", charge("exp-2"), kCharge);
    QCOMPARE(renewed.status, 201);
    QVERIFY(renewed.header("Idempotent-Replayed").empty());
    QCOMPARE(rig.upstream.executions("exp-2"), 2);
  }

  void upstream5xxFollowsTheCacheRule() {
    test::ProxyRig rig("px_5xx");
    auto c = rig.client();
    // after-start (the charges tier): the 500 is the outcome of an execution; it is replayed.
    const auto failed = c->post("/v1/charges", charge("err-1", {{"X-Test-Status", "500"}}), kCharge);
    QCOMPARE(failed.status, 500);
    const auto replayed = c->post("/v1/charges", charge("err-1"), kCharge);
    QCOMPARE(replayed.status, 500);
    QCOMPARE(replayed.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(rig.upstream.executions("err-1"), 1);
    // 2xx-only (the flaky tier): a failure is not stored, the retry runs and its success is.
    QCOMPARE(c->post("/v1/flaky", charge("err-2", {{"X-Test-Status", "503"}}), kCharge).status, 503);
    QCOMPARE(c->post("/v1/flaky", charge("err-2"), kCharge).status, 201);
    const auto stored = c->post("/v1/flaky", charge("err-2"), kCharge);
    QCOMPARE(stored.status, 201);
    QCOMPARE(stored.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(rig.upstream.executions("err-2"), 2);
  }
};

QTEST_GUILESS_MAIN(TestExactlyOnce)
#include "tst_exactlyonce.moc"
