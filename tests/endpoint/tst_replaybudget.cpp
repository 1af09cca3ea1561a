// Issue 28 #10, replay half: many clients replaying one large stored answer at once, against a
// real `idemctl proxy` (Python's http.server upstream) over a real store. Before: 60 replays of a
// 15 MiB answer grew the proxy to 1.3 GiB, kept 15 MiB per store connection afterwards (libpq's
// buffers), and their reads held every store connection, so other tenants' requests waited for
// the pool and got 503. Now replay bodies are bounded together (--max-replay-bytes), large bodies
// are read by at most --replay-large-reads connections (a quarter of --pool), and a connection
// that carried one is closed instead of pooled.
// In the endpoint group: the proxy and its upstream are child processes, which the proxy group's
// ThreadSanitizer run avoids starting after threads.
#include <QtTest>
#include <future>
#include <thread>
#include <vector>

#include "tests/endpoint/endpoint_support.h"
#include "tests/endpoint/process_memory.h"
#include "tests/endpoint/raw_http.h"
#include "tests/proxy/raw_upstream.h"

using namespace idem;
using namespace std::chrono_literals;
using test::bodyOf;
using test::exchange;
using test::statusOf;

namespace {

constexpr long long kMiB = 1024LL * 1024;
constexpr long long kBody = 8 * kMiB;     // the stored answer
constexpr long long kBudget = 64 * kMiB;  // --max-replay-bytes' default

// (A plain literal: Qt 6.4's moc finds no class after a multi-line R"json(...)json" string.)
const char* const kPolicy =
    "{ \"docs_url\": \"https://docs.test/idempotency\",\n"
    "  \"tiers\": [ { \"name\": \"big\", \"routes\": [\"POST /v1/big\"], \"ttl\": \"1h\" },\n"
    "             { \"name\": \"charges\", \"routes\": [\"POST /v1/charges\"], \"ttl\": \"1h\" } ] }";

std::string post(const std::string& path, const std::string& key, const std::string& tenant) {
  const std::string body = "{}";
  return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: " + key +
         "\r\nX-Tenant-Id: " + tenant + "\r\nX-Test-Bytes: " + std::to_string(kBody) +
         "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

bool hasHeader(const std::string& response, const std::string& line) {
  const auto head = response.substr(0, response.find("\r\n\r\n"));
  return head.find("\r\n" + line + "\r\n") != std::string::npos;
}

// What a burst of replays came back as: the stored answer byte for byte, or 503 + Retry-After.
struct Burst {
  int identical = 0;
  int refused = 0;
  std::vector<std::string> other;  // anything else, for the failure message
};

Burst collect(std::vector<std::future<std::string>>& replays, const std::string& stored) {
  Burst b;
  for (auto& f : replays) {
    const std::string r = f.get();
    if (statusOf(r) == 201 && bodyOf(r) == stored && hasHeader(r, "Idempotent-Replayed: true"))
      ++b.identical;
    else if (statusOf(r) == 503 && hasHeader(r, "Retry-After: 1") && r.find("#overloaded") != std::string::npos)
      ++b.refused;
    else
      b.other.push_back(r.substr(0, 300));
  }
  return b;
}

long long metric(const test::RawUpstreamRig& rig, const std::string& name) {
  return test::metricValue(
      exchange(rig.proxy->adminPort(), "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"), name);
}

std::vector<std::future<std::string>> replayConcurrently(int port, int count) {
  std::vector<std::future<std::string>> replays;
  replays.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    replays.push_back(
        std::async(std::launch::async, [port] { return exchange(port, post("/v1/big", "big-1", "a"), 60s); }));
  return replays;
}

}  // namespace

class TestReplayBudget : public QObject {
  Q_OBJECT

  static std::unique_ptr<test::RawUpstreamRig> rigWithStoredAnswer(const std::string& prefix, std::string& stored) {
    auto rig = std::make_unique<test::RawUpstreamRig>(
        prefix, kPolicy, std::vector<std::string>{"--pool", "4", "--tenant-header", "X-Tenant-Id"});
    const std::string first = exchange(rig->proxy->port(), post("/v1/big", "big-1", "a"), 60s);
    stored = bodyOf(first);
    if (statusOf(first) != 201 || stored.size() != static_cast<std::size_t>(kBody)) {
      qWarning("storing the large answer: %s", first.substr(0, 300).c_str());
      return nullptr;
    }
    return rig;
  }

 private slots:
  // The reads of a large stored body are held inside PostgreSQL (the TOAST index is locked, so
  // detoasting waits; small rows need no TOAST): before, every store connection stuck in such a
  // read and another tenant's new key waited for the pool until 503. Now one connection of the
  // four reads large bodies; the rest serve the other tenant.
  void otherTenantsKeepAStoreConnection() {
    std::string stored;
    auto rig = rigWithStoredAnswer("ep_replay_pool", stored);
    QVERIFY(rig);
    auto db = rig->db.connect();
    const std::string toastIndex =
        db.exec(
              "SELECT i.indexrelid::regclass::text AS name FROM pg_class c JOIN pg_index i ON i.indrelid = "
              "c.reltoastrelid WHERE c.oid = 'idem.keys'::regclass")
            .str(0, "name");
    auto lock = rig->db.connect();
    lock.exec("BEGIN");
    lock.exec("REINDEX INDEX " + toastIndex);  // its lock lasts until COMMIT

    auto replays = replayConcurrently(rig->proxy->port(), 8);
    // Wait for the replays to reach the store: their body reads queue behind the lock.
    int blocked = 0;
    for (int i = 0; i < 200 && blocked == 0; ++i) {
      std::this_thread::sleep_for(50ms);
      blocked = static_cast<int>(db.exec("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                         "AND datname = current_database()")
                                     .integer(0, "n"));
    }
    QVERIFY2(blocked > 0, "no replay reached the store's read");
    std::this_thread::sleep_for(300ms);  // the rest of the burst takes its turn meanwhile

    std::vector<int> others;
    others.reserve(3);
    for (int i = 0; i < 3; ++i)
      others.push_back(
          statusOf(exchange(rig->proxy->port(), post("/v1/charges", "other-" + std::to_string(i), "b"), 30s)));
    const long long largeReadsDuring = metric(*rig, "idem_replay_large_reads");
    lock.exec("COMMIT");

    const Burst b = collect(replays, stored);
    qInfo("other tenant: %d %d %d; replays: %d identical, %d refused; large reads during the lock: %lld", others[0],
          others[1], others[2], b.identical, b.refused, largeReadsDuring);
    QCOMPARE(others, (std::vector<int>{201, 201, 201}));
    QVERIFY2(b.other.empty(), b.other.empty() ? "" : b.other.front().c_str());
    QCOMPARE(b.identical + b.refused, 8);
    QVERIFY(b.identical >= 1);
    QCOMPARE(largeReadsDuring, 1LL);  // a quarter of --pool 4
    QCOMPARE(metric(*rig, "idem_replay_budget_refusals_total"), static_cast<long long>(b.refused));
    // Nothing was executed again: the upstream ran the large answer once.
    QCOMPARE(rig->executions("big-1"), 1);
  }

  // 32 concurrent replays of an 8 MiB answer: the proxy's peak stays within the 3/4 of the replay
  // budget that large bodies may use, plus one large read's own copies (libpq's buffer, its
  // result, the body: 3 x 8 MiB) and 16 MiB for everything else; before, it grew by every replay's copies at once.
  // Afterwards it is back within 16 MiB of where it was (before: 8 MiB kept per store connection), and the budget is
  // whole again (a replay after the burst is answered).
  void replayMemoryIsBoundedAndGivenBack() {
    std::string stored;
    auto rig = rigWithStoredAnswer("ep_replay_memory", stored);
    QVERIFY(rig);
    const pid_t pid = rig->proxy->pid();
    const long long baseline = test::residentKiB(pid);
    QVERIFY(test::resetPeakResident(pid));

    auto replays = replayConcurrently(rig->proxy->port(), 32);
    const Burst b = collect(replays, stored);
    const long long peak = test::statusKiB(pid, "VmHWM") - baseline;
    // The answers are all written (the clients read them whole): the budget is whole again.
    for (int i = 0; i < 50 && metric(*rig, "idem_replay_body_bytes") > 0; ++i) std::this_thread::sleep_for(100ms);
    std::this_thread::sleep_for(500ms);
    const long long after = test::residentKiB(pid) - baseline;
    qInfo("32 replays of 8 MiB: %d identical, %d refused, %zu other; peak +%lld KiB, +%lld KiB after", b.identical,
          b.refused, b.other.size(), peak, after);
    const long long peakBound = (kBudget / 4 * 3 + 3 * kBody + 16 * kMiB) / 1024;  // large bodies: 3/4 of it
    if (test::kResidentMemoryMeaningful) {
      QVERIFY2(peak < peakBound,
               ("peak +" + std::to_string(peak) + " KiB, bound " + std::to_string(peakBound)).c_str());
      QVERIFY2(after < 16LL * 1024, ("still +" + std::to_string(after) + " KiB after the burst").c_str());
    }
    QVERIFY2(b.other.empty(), b.other.empty() ? "" : b.other.front().c_str());
    QCOMPARE(b.identical + b.refused, 32);
    QVERIFY(b.identical >= 1);
    QCOMPARE(metric(*rig, "idem_replay_budget_refusals_total"), static_cast<long long>(b.refused));
    QCOMPARE(metric(*rig, "idem_replay_body_bytes"), 0LL);

    const std::string again = exchange(rig->proxy->port(), post("/v1/big", "big-1", "a"), 60s);
    QCOMPARE(statusOf(again), 201);
    QVERIFY(bodyOf(again) == stored);
    QCOMPARE(rig->executions("big-1"), 1);
  }
};

QTEST_GUILESS_MAIN(TestReplayBudget)
#include "tst_replaybudget.moc"
