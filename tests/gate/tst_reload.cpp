// The policy swapped under the gate (Server::reloadPolicy, what SIGHUP runs: docs/proxy.md,
// "Reloading"), on both shapes of an execution:
// - a request held across a reload that removes its route finishes under the policy it began
//   with: its answer is stored as its tier says, and replays once the route is back;
// - reloads racing requests from several threads: every answer is one policy's or the other's,
//   never a mix, and the last policy is the one enforced (ThreadSanitizer runs this group).
#include <QtTest>
#include <atomic>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "tests/gate/gate_support.h"

using namespace idem;
using test::keyed;

namespace {

// The gate policy without the charges tier: POST /v1/charges is then no tier's route.
policy::Policy withoutCharges() {
  policy::Policy p = policy::parsePolicy(test::kGatePolicy, "gate-test-policy.json");
  p.document["tiers"].erase(0);
  return policy::parsePolicy(p.document.dump(), "gate-test-policy-without-charges.json");
}

// The gate policy with charges in observe: a keyless charge then passes instead of a 400.
policy::Policy chargesObserved() {
  policy::Policy p = policy::parsePolicy(test::kGatePolicy, "gate-test-policy.json");
  p.document["tiers"][0]["rollout"] = "observe";
  return policy::parsePolicy(p.document.dump(), "gate-test-policy-observed.json");
}

policy::Policy original() { return policy::parsePolicy(test::kGatePolicy, "gate-test-policy.json"); }

int keyVersion(const test::TestDatabase& db, const std::string& key) {
  auto c = db.connect();
  return static_cast<int>(c.exec("SELECT policy_version AS v FROM idem.keys WHERE idem_key = $1", {key}).integer(0, "v"));
}

}  // namespace

class TestReload : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<test::GatePair> m_pair;

 private slots:
  void initTestCase_data() { test::GatePair::addShapes(); }
  void initTestCase() { m_pair = std::make_unique<test::GatePair>("gate_reload"); }
  void cleanupTestCase() { m_pair.reset(); }

  void aHeldRequestFinishesUnderThePolicyItBeganWith() {
    auto& s = m_pair->server();
    auto& server = *s.server;
    const std::string key = test::GatePair::key("held-1");
    const int before = server.policyVersion();
    auto held = keyed(key);
    held.emplace_back("X-Hold", "1");
    auto answer = std::async(std::launch::async, [&s, held] { return s.post("/v1/charges", held); });
    QTRY_COMPARE(s.execution->held(), std::size_t{1});

    const auto removed = server.reloadPolicy(withoutCharges());
    QVERIFY2(removed.applied, removed.refusal.c_str());
    QVERIFY(removed.version != before);
    // A request that starts now meets the new policy: a key on a route no tier covers is refused.
    QCOMPARE(s.post("/v1/charges", keyed(test::GatePair::key("after-1"))).status, 400);

    s.execution->release();  // the held request completes: its ticket still has its tier
    QCOMPARE(answer.get().status, 201);
    QCOMPARE(keyVersion(m_pair->db, key), before);

    const auto back = server.reloadPolicy(original());
    QVERIFY2(back.applied, back.refusal.c_str());
    QCOMPARE(back.version, before);  // an identical document keeps its version
    const int runs = s.execution->calls();
    const auto replay = s.post("/v1/charges", keyed(key));
    QCOMPARE(replay.status, 201);
    QCOMPARE(replay.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(s.execution->calls(), runs);  // stored under its own tier: not run again
  }

  void reloadsRacingRequestsNeverMixTwoPolicies() {
    auto& s = m_pair->server();
    auto& server = *s.server;
    std::atomic<bool> stop{false};
    std::atomic<int> passed{0}, refused{0}, other{0};
    std::vector<std::thread> clients;
    for (int t = 0; t < 4; ++t)
      clients.emplace_back([&, t] {
        for (int i = 0; !stop.load(); ++i) {
          // Keyless: 400 under required, 201 (observed) under observe; nothing else.
          const int status = s.post("/v1/charges", keyed("")).status;
          (status == 201 ? passed : status == 400 ? refused : other)++;
          // Keyed: executed under either; a fresh key each time.
          if (s.post("/v1/charges", keyed(test::GatePair::key("race-" + std::to_string(t) + "-" + std::to_string(i))))
                  .status != 201)
            other++;
        }
      });
    for (int i = 0; i < 20; ++i) {
      const auto r = server.reloadPolicy(i % 2 == 0 ? chargesObserved() : original());
      QVERIFY2(r.applied, r.refusal.c_str());
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const auto last = server.reloadPolicy(chargesObserved());
    QVERIFY(last.applied);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop = true;
    for (auto& c : clients) c.join();
    QCOMPARE(other.load(), 0);
    QVERIFY(passed.load() + refused.load() > 0);
    QCOMPARE(server.policyVersion(), last.version);
    QCOMPARE(s.post("/v1/charges", keyed("")).status, 201);  // the last policy is the one enforced
    QVERIFY(server.reloadPolicy(original()).applied);
    QCOMPARE(s.post("/v1/charges", keyed("")).status, 400);
  }
};

QTEST_GUILESS_MAIN(TestReload)
#include "tst_reload.moc"
