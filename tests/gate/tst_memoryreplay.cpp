// A done key's replay from the memory cache is answered on the event loop (issue 28,
// "Performance": a replay from the cache need not leave the loop), for both shapes of an
// execution. The proof: every handler thread and every store connection is held by a new key
// whose claim waits on a lock the test holds on idem.keys, and a replay the cache holds is still
// answered — traced and counted as any replay — before any of them.
#include <QtTest>
#include <future>

#include "tests/gate/gate_support.h"

using namespace idem;

namespace {
constexpr int kThreads = 4;  // the fake's server has as many store connections
}  // namespace

class TstMemoryReplay : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;

 private slots:
  void initTestCase() { m_db = std::make_unique<test::TestDatabase>("gate_memoryreplay"); }
  void cleanupTestCase() { m_db.reset(); }

  void aCachedReplayNeedsNoHandlerThread_data() {
    QTest::addColumn<bool>("onLoop");
    QTest::newRow("loop") << true;
    QTest::newRow("handlers") << false;
  }
  void aCachedReplayNeedsNoHandlerThread() {
    QFETCH(bool, onLoop);
    test::GateServer s(*m_db, onLoop ? gate::Execution::Thread::Loop : gate::Execution::Thread::Handlers, kThreads,
                       [](gate::Host& host) {
                         host.enforcer().setReplayCache({.maxAge = std::chrono::seconds(60)});
                       });
    const std::string key = std::string("mem-") + (onLoop ? "loop" : "handlers");
    const auto first = s.post("/v1/charges", test::keyed(key));
    QCOMPARE(first.status, 201);
    QCOMPARE(s.post("/v1/charges", test::keyed(key)).header("Idempotent-Replayed"), std::string("true"));  // cached now
    const long long hitsBefore = s.sample("\nidem_replay_cache_hits_total ");

    // The new keys' claims wait on the test's lock: with handler threads, every thread (and
    // store connection) waits in one; on the loop no thread does, their statements (batched) wait.
    // The futures first: a failed check returns, and the lock must go before they are waited for.
    std::vector<std::future<client::ClientResponse>> stuck;
    std::future<client::ClientResponse> replay;
    auto locker = m_db->connect();
    locker.exec("BEGIN");
    locker.exec("LOCK TABLE idem.keys IN ACCESS EXCLUSIVE MODE");
    auto unlock = qScopeGuard([&] { locker.exec("ROLLBACK"); });
    for (int i = 0; i < kThreads; ++i)
      stuck.push_back(std::async(std::launch::async, [&s, &key, i] {
        return client::Client("127.0.0.1", s.server->port(), std::chrono::seconds(40))
            .post("/v1/charges", test::keyed(key + "-new-" + std::to_string(i)), R"({"amount":1})");
      }));
    auto observer = m_db->connect();
    if (onLoop) QTRY_VERIFY(test::waitingOnLocks(observer) >= 1);
    else QTRY_COMPARE(test::waitingOnLocks(observer), static_cast<long long>(kThreads));

    replay = std::async(std::launch::async, [&s, &key] {
      return client::Client("127.0.0.1", s.server->port(), std::chrono::seconds(40))
          .post("/v1/charges", test::keyed(key), R"({"amount":1})");
    });
    QVERIFY2(replay.wait_for(std::chrono::seconds(10)) == std::future_status::ready,
             "the cached replay waited for a handler thread");
    const auto r = replay.get();
    QCOMPARE(r.status, 201);
    QCOMPARE(r.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(r.body, first.body);
    QCOMPARE(r.header("Idempotency-Key"), "\"" + key + "\"");
    QVERIFY(!r.header("Idempotency-Expires").empty());
    for (auto& f : stuck) QVERIFY(f.wait_for(std::chrono::seconds(0)) != std::future_status::ready);
    // All still held meanwhile (on the loop the claims' statements: how many, the batching decides).
    if (onLoop) QVERIFY(test::waitingOnLocks(observer) >= 1);
    else QCOMPARE(test::waitingOnLocks(observer), static_cast<long long>(kThreads));

    unlock.dismiss();
    locker.exec("ROLLBACK");
    for (auto& f : stuck) QCOMPARE(f.get().status, 201);
    // A replay like any other: counted, labelled, traced.
    QCOMPARE(s.sample("\nidem_replay_cache_hits_total "), hitsBefore + 1);
    QCOMPARE(s.requests("charges", "replayed", 201), 2LL);
    QTRY_COMPARE(s.logLine(r.header("Request-Id")).value("outcome", ""), std::string("replayed"));
    auto c = m_db->connect();
    QTRY_COMPARE(c.exec("SELECT count(*) AS n FROM idem.events WHERE request_id = $1 AND outcome = 'replayed'",
                        {r.header("Request-Id")})
                     .integer(0, "n"),
                 1LL);
    QCOMPARE(s.execution->calls(), 1 + kThreads);  // the first and the new keys: the replays ran nothing
  }

  void aCachedReplayStillPassesTheExecutionsChecks_data() { aCachedReplayNeedsNoHandlerThread_data(); }
  void aCachedReplayStillPassesTheExecutionsChecks() {
    QFETCH(bool, onLoop);
    test::GateServer s(*m_db, onLoop ? gate::Execution::Thread::Loop : gate::Execution::Thread::Handlers, kThreads,
                       [](gate::Host& host) {
                         host.enforcer().setReplayCache({.maxAge = std::chrono::seconds(60)});
                       });
    const std::string key = std::string("mem-vet-") + (onLoop ? "loop" : "handlers");
    QCOMPARE(s.post("/v1/charges", test::keyed(key)).status, 201);
    QCOMPARE(s.post("/v1/charges", test::keyed(key)).header("Idempotent-Replayed"), std::string("true"));
    // What the execution refuses before any claim is refused before a replay from memory too.
    http::Headers refused = test::keyed(key);
    refused.emplace_back("X-Refuse", "1");
    QCOMPARE(s.post("/v1/charges", refused).status, 415);
    // Another payload under the key is the store's to answer (422), not the cache's.
    QCOMPARE(s.post("/v1/charges", test::keyed(key), R"({"amount":2})").status, 422);
    QCOMPARE(s.execution->calls(), 1);
  }
};

QTEST_GUILESS_MAIN(TstMemoryReplay)
#include "tst_memoryreplay.moc"
