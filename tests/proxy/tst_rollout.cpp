// The rollout path through a real `idemctl proxy` before the sample service, whose ledger counts
// its own executions (issue 31, item 2; docs/policy.md, "Rollout"):
// - observe: a keyless request, a malformed key, a retry of a completed key, two concurrent
//   requests of one key, a key reused with another body and an expired key on a `reject` tier
//   all reach the service; each is recorded with the decision that was not enforced, in the
//   trace and in idem_observed_total, and nothing waits.
// - observe → required on a restart: a key completed under observe replays.
// - when-present: keyless requests pass (passed_without_key); a keyed one is enforced.
#include <QtTest>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/proxy/proxy_support.h"

using namespace idem;
using nlohmann::json;
using test::charge;

namespace {
// Not raw strings: moc reads raw strings as ordinary ones and would lose the test class.
// on_conflict wait:5s: enforcement would wait for the first request; observe must not.
std::string policyWith(const std::string& rollout) {
  return "{\"docs_url\": \"https://docs.test/idempotency\", \"tiers\": ["
         "{\"name\": \"charges\", \"routes\": [\"POST /v1/charges\"], \"ttl\": \"1h\", \"lease\": \"10s\","
         " \"on_conflict\": \"wait:5s\", \"fingerprint\": {\"mode\": \"json\"}, \"rollout\": \"" +
         rollout +
         "\"},"
         "{\"name\": \"short\", \"routes\": [\"POST /v1/short\"], \"ttl\": \"1s\", \"lease\": \"500ms\","
         " \"on_expired\": \"reject\", \"rollout\": \"" +
         rollout + "\"}]}";
}

const std::string kOther = "{\"amount\":2000,\"currency\":\"usd\"}";

long long observedTotal(const std::string& metrics, const std::string& route, const std::string& would) {
  const std::string series = "idem_observed_total{route=\"" + route + "\",would=\"" + would + "\"} ";
  const auto at = metrics.find(series);
  return at == std::string::npos ? 0 : std::stoll(metrics.substr(at + series.size()));
}

// The trace is written in batches (every 100 ms): wait for the rows.
long long eventsSoon(const test::ProxyRig& rig, const std::string& key, const std::string& outcome, long long want) {
  long long n = 0;
  for (int i = 0; i < 100 && (n = rig.events(key, outcome)) < want; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return n;
}
}  // namespace

class TestRollout : public QObject {
  Q_OBJECT

 private slots:
  void observeForwardsEverythingAndRecordsWhatItWouldHaveDone() {
    test::ProxyRig rig("px_observe", {}, policyWith("observe"));
    auto c = rig.client();

    // Keyless: enforcement would answer 400; the service runs it.
    const auto keyless = c->post("/v1/charges", charge(""), test::kCharge);
    QCOMPARE(keyless.status, 201);
    QCOMPARE(rig.upstream.executions("-"), 1);

    // A malformed key (an unterminated sf-string): would be 400; runs.
    const auto malformed = c->post("/v1/charges", charge("\"open"), test::kCharge);
    QCOMPARE(malformed.status, 201);
    QCOMPARE(rig.upstream.executions("\"open"), 1);

    // A key's first request executes and is stored, as under enforcement.
    const auto first = c->post("/v1/charges", charge("obs-1"), test::kCharge);
    QCOMPARE(first.status, 201);
    QCOMPARE(rig.upstream.executions("obs-1"), 1);
    // Its retry would be a replay: the service runs it again, and the answer is the service's.
    const auto retry = c->post("/v1/charges", charge("obs-1"), test::kCharge);
    QCOMPARE(retry.status, 201);
    QVERIFY(retry.header("Idempotent-Replayed").empty());
    QVERIFY(retry.body != first.body);  // a new charge id: the service answered
    QCOMPARE(rig.upstream.executions("obs-1"), 2);
    // The key with another body would be a 422: runs.
    QCOMPARE(c->post("/v1/charges", charge("obs-1"), kOther).status, 201);
    QCOMPARE(rig.upstream.executions("obs-1"), 3);

    // Two concurrent requests of one key: the second would be a 409 (or would wait 5 s for the
    // first, by on_conflict); it runs at once while the first is still running.
    auto slow = std::async(std::launch::async, [&rig] {
      return rig.client()->post("/v1/charges", charge("obs-2", {{"X-Test-Sleep-Ms", "4000"}}), test::kCharge);
    });
    for (int i = 0; i < 200 && rig.upstream.executions("obs-2") < 1; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    QCOMPARE(rig.upstream.executions("obs-2"), 1);
    const auto concurrent = c->post("/v1/charges", charge("obs-2"), test::kCharge);
    QCOMPARE(concurrent.status, 201);
    QCOMPARE(rig.upstream.executions("obs-2"), 2);
    QVERIFY(slow.wait_for(std::chrono::seconds(0)) != std::future_status::ready);  // it did not wait
    QCOMPARE(slow.get().status, 201);

    // An expired key on an on_expired: reject tier would be a 422: runs.
    QCOMPARE(c->post("/v1/short", charge("obs-3"), test::kCharge).status, 201);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    QCOMPARE(c->post("/v1/short", charge("obs-3"), test::kCharge).status, 201);
    QCOMPARE(rig.upstream.executions("obs-3"), 2);

    // The trace names each decision that was not enforced, with the key and route.
    QCOMPARE(eventsSoon(rig, "", "observed_key_missing", 1), 1LL);
    QCOMPARE(eventsSoon(rig, "\"open", "observed_key_malformed", 1), 1LL);
    QCOMPARE(eventsSoon(rig, "obs-1", "observed_replayed", 1), 1LL);
    QCOMPARE(eventsSoon(rig, "obs-1", "observed_mismatch", 1), 1LL);
    QCOMPARE(eventsSoon(rig, "obs-2", "observed_conflict", 1), 1LL);
    QCOMPARE(eventsSoon(rig, "obs-3", "observed_rejected_expired", 1), 1LL);
    QCOMPARE(rig.events("obs-1", "executed"), 1LL);  // the first request's execution, as enforced
    {
      auto conn = rig.db.connect();
      const auto row = conn.exec(
          "SELECT endpoint, tier, status FROM idem.events WHERE idem_key = 'obs-2' AND outcome = 'observed_conflict'");
      QCOMPARE(row.str(0, "endpoint"), std::string("POST /v1/charges"));
      QCOMPARE(row.str(0, "tier"), std::string("charges"));
      QCOMPARE(row.integer(0, "status"), 409LL);  // what enforcement would have answered
    }

    // And in the metrics, by route and decision.
    const std::string metrics = client::Client("127.0.0.1", rig.adminPort()).get("/metrics").body;
    QCOMPARE(observedTotal(metrics, "POST /v1/charges", "key_missing"), 1LL);
    QCOMPARE(observedTotal(metrics, "POST /v1/charges", "key_malformed"), 1LL);
    QCOMPARE(observedTotal(metrics, "POST /v1/charges", "replayed"), 1LL);
    QCOMPARE(observedTotal(metrics, "POST /v1/charges", "mismatch"), 1LL);
    QCOMPARE(observedTotal(metrics, "POST /v1/charges", "conflict"), 1LL);
    QCOMPARE(observedTotal(metrics, "POST /v1/short", "rejected_expired"), 1LL);
    QVERIFY2(metrics.find("idem_requests_total{tier=\"charges\",outcome=\"observed\",status=\"201\"} 5") !=
                 std::string::npos,
             metrics.c_str());

    // Switched to required on a restart: the key observe stored is honoured (its completion is
    // the first execution's, stored as enforcement stores it), and a keyless request is refused.
    std::ofstream(rig.dir / "policy.json") << policyWith("required");
    rig.startProxy({});
    auto after = rig.client();
    const auto replay = after->post("/v1/charges", charge("obs-1"), test::kCharge);
    QCOMPARE(replay.status, 201);
    QCOMPARE(replay.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(replay.body, first.body);
    QCOMPARE(rig.upstream.executions("obs-1"), 3);
    QCOMPARE(after->post("/v1/charges", charge("obs-1"), kOther).status, 422);
    QCOMPARE(after->post("/v1/charges", charge(""), test::kCharge).status, 400);
    QCOMPARE(rig.upstream.executions("obs-1"), 3);
    QCOMPARE(rig.upstream.executions("-"), 1);
  }

  void observeFailsOpenWhenTheStoreIsAway() {
    test::ProxyRig rig("px_observe_down", {}, policyWith("observe"));
    auto c = rig.client();
    QCOMPARE(c->post("/v1/charges", charge("down-0"), test::kCharge).status, 201);
    // Every connection of the proxy's pool is ended and new ones refused: the store is away.
    // This connection stays: it lets them in again.
    pg::Connection admin(rig.db.conninfo() + " dbname=postgres");
    admin.exec("ALTER DATABASE " + rig.db.name() + " ALLOW_CONNECTIONS false");
    admin.exec("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = $1 AND pid <> "
               "pg_backend_pid()",
               {rig.db.name()});
    const auto r = c->post("/v1/charges", charge("down-1"), test::kCharge);
    admin.exec("ALTER DATABASE " + rig.db.name() + " ALLOW_CONNECTIONS true");
    QCOMPARE(r.status, 201);  // enforcement would answer 503; observe passes it on
    QCOMPARE(rig.upstream.executions("down-1"), 1);
    const std::string metrics = client::Client("127.0.0.1", rig.adminPort()).get("/metrics").body;
    QCOMPARE(observedTotal(metrics, "POST /v1/charges", "unavailable"), 1LL);
  }

  void whenPresentPassesKeylessAndEnforcesKeys() {
    test::ProxyRig rig("px_when_present", {}, policyWith("when-present"));
    auto c = rig.client();
    QCOMPARE(c->post("/v1/charges", charge(""), test::kCharge).status, 201);
    QCOMPARE(c->post("/v1/charges", charge(""), test::kCharge).status, 201);
    QCOMPARE(rig.upstream.executions("-"), 2);

    const auto first = c->post("/v1/charges", charge("wp-1"), test::kCharge);
    QCOMPARE(first.status, 201);
    const auto replay = c->post("/v1/charges", charge("wp-1"), test::kCharge);
    QCOMPARE(replay.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(replay.body, first.body);
    QCOMPARE(rig.upstream.executions("wp-1"), 1);  // served from the store, not forwarded
    QCOMPARE(c->post("/v1/charges", charge("wp-1"), kOther).status, 422);
    QCOMPARE(rig.upstream.executions("wp-1"), 1);

    const std::string metrics = client::Client("127.0.0.1", rig.adminPort()).get("/metrics").body;
    QVERIFY2(metrics.find("idem_requests_total{tier=\"charges\",outcome=\"passed_without_key\",status=\"201\"} 2") !=
                 std::string::npos,
             metrics.c_str());
    QVERIFY(metrics.find("idem_observed_total{") == std::string::npos);  // nothing observed
  }
};

QTEST_GUILESS_MAIN(TestRollout)
#include "tst_rollout.moc"
