// A slow upstream holds sockets and timers, never the proxy's threads (issue 28, scenario 1):
// with two handler threads, dozens of requests waiting on a slow route — plain and keyed — leave
// an unrelated fast route and the admin /healthz answering at once.
#include <QtTest>
#include <future>

#include "core/client/client.h"
#include "tests/proxy/proxy_support.h"
#include "tests/proxy/raw_upstream.h"

using namespace idem;

namespace {
// (ordinary literals: moc cannot parse raw strings)
const char* const kPolicy =
    "{ \"docs_url\": \"https://docs.test/idempotency\",\n"
    "  \"tiers\": [ { \"name\": \"slow\", \"routes\": [\"POST /v1/slow\"], \"ttl\": \"1h\", \"lease\": \"30s\" } ] }\n";

// The same route, its retries waiting for the running original (on_conflict wait).
const char* const kWaitPolicy =
    "{ \"docs_url\": \"https://docs.test/idempotency\",\n"
    "  \"tiers\": [ { \"name\": \"slow\", \"routes\": [\"POST /v1/slow\"], \"ttl\": \"1h\", \"lease\": \"30s\",\n"
    "                \"on_conflict\": \"wait:15s\" } ] }\n";

double secondsFor(const std::function<int()>& call, int& status) {
  const auto at = std::chrono::steady_clock::now();
  status = call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - at).count();
}
}  // namespace

class TestSlowUpstream : public QObject {
  Q_OBJECT

 private slots:
  void slowRequestsHoldNoThread() {
    test::RawUpstreamRig rig("px_slowup", kPolicy, {"--threads", "2"});
    const int port = rig.proxy->port();
    std::vector<std::future<client::ClientResponse>> slow;
    for (int i = 0; i < 24; ++i)
      slow.push_back(std::async(std::launch::async, [port, i] {
        client::Client c("127.0.0.1", port, std::chrono::seconds(30));
        if (i % 2 == 0) return c.get("/slow", {{"X-Test-Sleep-Ms", "4000"}});
        return c.post("/v1/slow",
                      {{"Content-Type", "application/json"},
                       {"Idempotency-Key", "slow-" + std::to_string(i)},
                       {"X-Test-Sleep-Ms", "4000"}},
                      "{}");
      }));
    QThread::msleep(700);  // every slow request is with the upstream now
    int status = 0;
    client::Client fast("127.0.0.1", port, std::chrono::seconds(30));
    const double fastSeconds = secondsFor([&] { return fast.get("/peek").status; }, status);
    QCOMPARE(status, 200);
    QVERIFY2(fastSeconds < 1.0, std::to_string(fastSeconds).c_str());
    client::Client admin("127.0.0.1", test::adminPortOf(*rig.proxy), std::chrono::seconds(30));
    const double healthSeconds = secondsFor([&] { return admin.get("/healthz").status; }, status);
    QCOMPARE(status, 200);
    QVERIFY2(healthSeconds < 1.0, std::to_string(healthSeconds).c_str());
    // A keyed request on a fast route goes through the handler threads too: not stuck behind.
    const double keyedSeconds = secondsFor(
        [&] {
          return fast.post("/v1/slow", {{"Content-Type", "application/json"}, {"Idempotency-Key", "quick-1"},
                                        {"X-Test-Sleep-Ms", "0"}}, "{}").status;
        },
        status);
    QCOMPARE(status, 201);
    QVERIFY2(keyedSeconds < 1.0, std::to_string(keyedSeconds).c_str());
    for (auto& f : slow) {
      const auto r = f.get();
      QVERIFY2(r.status == 200 || r.status == 201, std::to_string(r.status).c_str());
    }
  }

  // Issue 28, scenario 1's second half: a slow keyed request in flight, then three times as many
  // retries of its key as the proxy has handler threads, on a tier that waits for the original.
  // The retries wait on timers: a new key and the admin /healthz answer before the upstream
  // answers the original; then every retry gets its answer as a replay, and it ran once.
  void conflictWaitsHoldNoThread() {
    test::RawUpstreamRig rig("px_conflictwait", kWaitPolicy, {"--threads", "4"});
    const int port = rig.proxy->port();
    const int adminPort = test::adminPortOf(*rig.proxy);
    const http::Headers slow{{"Content-Type", "application/json"}, {"Idempotency-Key", "waited-1"},
                             {"X-Test-Sleep-Ms", "10000"}};
    auto post = [port](const http::Headers& headers) {
      return std::async(std::launch::async, [port, headers] {
        return client::Client("127.0.0.1", port, std::chrono::seconds(30)).post("/v1/slow", headers, "{}");
      });
    };
    auto original = post(slow);
    QTRY_COMPARE(rig.executions("waited-1"), 1);  // the upstream has it (its ledger, before it sleeps)
    std::vector<std::future<client::ClientResponse>> retries;
    for (int i = 0; i < 12; ++i) retries.push_back(post(slow));
    client::Client admin("127.0.0.1", adminPort, std::chrono::seconds(30));
    // Checked below, after what the old code failed at (it had no such gauge).
    const bool allWaiting = QTest::qWaitFor(
        [&] { return test::metricSample(admin.get("/metrics").body, "idem_conflict_waiters") == 12; }, 3000);

    auto other = post({{"Content-Type", "application/json"}, {"Idempotency-Key", "other-1"}, {"X-Test-Sleep-Ms", "0"}});
    QVERIFY2(other.wait_for(std::chrono::seconds(5)) == std::future_status::ready, "a new key waited behind the retries");
    QCOMPARE(other.get().status, 201);
    QCOMPARE(admin.get("/healthz").status, 200);
    // All of that before the upstream answered the original.
    QVERIFY(original.wait_for(std::chrono::seconds(0)) != std::future_status::ready);
    QVERIFY(allWaiting);

    const auto first = original.get();
    QCOMPARE(first.status, 201);
    for (auto& f : retries) {
      const auto r = f.get();
      QCOMPARE(r.status, 201);
      QCOMPARE(r.header("Idempotent-Replayed"), std::string("true"));
      QCOMPARE(r.body, first.body);
    }
    QCOMPARE(rig.executions("waited-1"), 1);
  }

  // The operator sets how many retries may wait: with room for three, the fourth and fifth
  // retries get the ordinary 409 at once (with Retry-After) while the three wait and replay.
  void theOperatorBoundsConflictWaiters() {
    test::RawUpstreamRig rig("px_waitbounds", kWaitPolicy,
                             {"--threads", "4", "--max-conflict-waiters", "3", "--max-conflict-waiters-per-key", "3"});
    const int port = rig.proxy->port();
    client::Client admin("127.0.0.1", test::adminPortOf(*rig.proxy), std::chrono::seconds(30));
    const http::Headers slow{{"Content-Type", "application/json"}, {"Idempotency-Key", "bounded-1"},
                             {"X-Test-Sleep-Ms", "8000"}};
    auto post = [port, &slow] {
      return std::async(std::launch::async, [port, slow] {
        return client::Client("127.0.0.1", port, std::chrono::seconds(30)).post("/v1/slow", slow, "{}");
      });
    };
    auto original = post();
    QTRY_COMPARE(rig.executions("bounded-1"), 1);
    std::vector<std::future<client::ClientResponse>> waiting;
    for (int i = 0; i < 3; ++i) waiting.push_back(post());
    QTRY_COMPARE(test::metricSample(admin.get("/metrics").body, "idem_conflict_waiters"), 3LL);
    for (int i = 0; i < 2; ++i) {
      auto refused = post();
      QVERIFY2(refused.wait_for(std::chrono::seconds(2)) == std::future_status::ready, "a retry past the bound waited");
      const auto r = refused.get();
      QCOMPARE(r.status, 409);
      QVERIFY(!r.header("Retry-After").empty());
    }
    QVERIFY(test::metricSample(admin.get("/metrics").body, "idem_conflict_waits_refused_total") >= 2);
    QCOMPARE(original.get().status, 201);
    for (auto& f : waiting) QCOMPARE(f.get().header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(rig.executions("bounded-1"), 1);
  }

  // A bound the flags cannot hold is refused at start, naming the flag.
  void conflictWaiterBoundsAreChecked() {
    QTemporaryFile policy;
    QVERIFY(policy.open());
    policy.write(kWaitPolicy);
    policy.close();
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"--max-conflict-waiters", "0"}, {"--max-conflict-waiters", "4", "--max-conflict-waiters-per-key", "5"}}) {
      std::string out;
      std::vector<std::string> cmd{"proxy", "--db", "host=/nonexistent", "--policy", policy.fileName().toStdString(),
                                   "--upstream", "http://127.0.0.1:9"};
      cmd.insert(cmd.end(), args.begin(), args.end());
      QCOMPARE(test::runIdemctl(cmd, &out), 2);
      QVERIFY2(out.find("--max-conflict-waiters") != std::string::npos, out.c_str());
    }
  }

  void oneSlowRouteCannotTakeEveryUpstreamConnection() {
    test::RawUpstreamRig rig("px_routecap", kPolicy,
                             {"--upstream-connections", "8", "--upstream-connections-per-route", "4"});
    const int port = rig.proxy->port();
    std::vector<std::future<client::ClientResponse>> slow;
    for (int i = 0; i < 6; ++i)
      slow.push_back(std::async(std::launch::async, [port] {
        client::Client c("127.0.0.1", port, std::chrono::seconds(30));
        return c.get("/slow", {{"X-Test-Sleep-Ms", "3000"}});
      }));
    QThread::msleep(700);
    client::Client fast("127.0.0.1", port, std::chrono::seconds(30));
    QCOMPARE(fast.get("/peek").status, 200);  // another route still has connections
    int answered = 0, refused = 0;
    for (auto& f : slow) {
      const auto r = f.get();
      if (r.status == 200) ++answered;
      if (r.status == 503) {
        ++refused;
        QCOMPARE(r.header("Retry-After"), std::string("1"));
      }
    }
    QCOMPARE(answered, 4);
    QCOMPARE(refused, 2);
  }

  void aTierHasItsOwnDeadline() {
    test::RawUpstreamRig rig("px_tiertimeout", kPolicy, {"--tier-timeout", "slow=500ms"});
    client::Client c("127.0.0.1", rig.proxy->port(), std::chrono::seconds(30));
    int status = 0;
    const double seconds = secondsFor(
        [&] {
          return c.post("/v1/slow", {{"Content-Type", "application/json"}, {"Idempotency-Key", "deadline-1"},
                                     {"X-Test-Sleep-Ms", "2500"}}, "{}").status;
        },
        status);
    QCOMPARE(status, 504);  // the global --upstream-timeout is 30 s
    QVERIFY2(seconds < 1.5, std::to_string(seconds).c_str());
    // The late answer is still awaited and stored: the retry gets it, the work ran once.
    client::ClientResponse after;
    QTRY_VERIFY_WITH_TIMEOUT(
        (after = c.post("/v1/slow", {{"Content-Type", "application/json"}, {"Idempotency-Key", "deadline-1"}}, "{}"))
                .status == 201,
        8000);
    QCOMPARE(after.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(rig.executions("deadline-1"), 1);
  }
};

QTEST_GUILESS_MAIN(TestSlowUpstream)
#include "tst_slowupstream.moc"
