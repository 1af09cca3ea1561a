// New keys through an execution on the event loop (the proxy's shape): their claims and
// completions go to the store on statements no thread waits on (core/store/asynckeybatches.h), so
// new keys stuck in the store hold no handler thread — the requests that do need one (a key this
// process has seen is read first, on a handler thread) are answered meanwhile. The server on
// handler threads (serve's shape) is the contrast: there the same stuck claims hold every thread.
// The store is made to hold new keys by a lock that stops writes to the keys and lets reads pass.
#include <QtTest>
#include <future>

#include "core/store/migrations.h"
#include "tests/gate/gate_support.h"

using namespace idem;
using namespace std::chrono_literals;

namespace {

constexpr int kThreads = 2;
constexpr int kStuck = 2 * kThreads;


}  // namespace

class TstWritesWithoutWaiting : public QObject {
  Q_OBJECT

  std::unique_ptr<test::TestDatabase> m_db;

 private slots:
  void initTestCase() { m_db = std::make_unique<test::TestDatabase>("gate_nowait"); }
  void cleanupTestCase() { m_db.reset(); }

  void newKeysStuckInTheStoreHoldNoHandlerThread_data() {
    QTest::addColumn<bool>("onLoop");
    QTest::newRow("loop") << true;
    QTest::newRow("handlers") << false;
  }
  void newKeysStuckInTheStoreHoldNoHandlerThread() {
    QFETCH(bool, onLoop);
    test::GateServer s(*m_db, onLoop ? gate::Execution::Thread::Loop : gate::Execution::Thread::Handlers, kThreads,
                       [](gate::Host& host) { host.enforcer().setReplayCache({.maxAge = 0s}); });
    const std::string tag = onLoop ? "loop" : "handlers";
    const std::string done = "nowait-done-" + tag;
    const auto first = s.post("/v1/charges", test::keyed(done));
    QCOMPARE(first.status, 201);

    // Writes to the keys wait; reads pass (SHARE blocks INSERT and UPDATE, not SELECT). The futures
    // first: a failed check returns, and the lock must go before they are waited for.
    std::vector<std::future<client::ClientResponse>> stuck;
    std::future<client::ClientResponse> replay;
    auto locker = m_db->connect();
    locker.exec("BEGIN");
    locker.exec("LOCK TABLE idem.keys IN SHARE MODE");
    auto unlock = qScopeGuard([&] { locker.exec("ROLLBACK"); });
    for (int i = 0; i < kStuck; ++i)
      stuck.push_back(std::async(std::launch::async, [&s, &tag, i] {
        return client::Client("127.0.0.1", s.server->port(), 40s)
            .post("/v1/charges", test::keyed("nowait-new-" + tag + "-" + std::to_string(i)), R"({"amount":1})");
      }));
    auto observer = m_db->connect();
    QTRY_VERIFY(test::waitingOnLocks(observer) >= 1);
    QTest::qWait(200);  // every stuck request has reached the store (or a handler thread's queue)

    // A key this process decided is read first, on a handler thread: its replay needs one.
    replay = std::async(std::launch::async, [&s, &done] {
      return client::Client("127.0.0.1", s.server->port(), 40s).post("/v1/charges", test::keyed(done), R"({"amount":1})");
    });
    const bool answered = replay.wait_for(10s) == std::future_status::ready;
    for (auto& f : stuck) QVERIFY(f.wait_for(0s) != std::future_status::ready);  // still stuck meanwhile
    unlock.dismiss();
    locker.exec("ROLLBACK");
    if (onLoop) {
      QVERIFY2(answered, "a handler thread was held by a new key stuck in the store");
    } else {
      // The contrast: with a thread waiting on each request's statement, both threads were held.
      QVERIFY2(!answered, "the server on handler threads answered while every thread waited in a claim");
    }
    const auto r = replay.get();
    QCOMPARE(r.status, 201);
    QCOMPARE(r.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(r.body, first.body);

    // Once the store takes writes again every stuck key runs once and is stored.
    for (auto& f : stuck) {
      const auto made = f.get();
      QCOMPARE(made.status, 201);
      QVERIFY(made.header("Idempotent-Replayed").empty());
    }
    QCOMPARE(s.execution->calls(), 1 + kStuck);
    QCOMPARE(s.requests("charges", "executed", 201), 1LL + kStuck);
    QTRY_COMPARE(observer
                     .exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key LIKE $1 AND state = 'done'",
                           {"nowait-new-" + tag + "-%"})
                     .integer(0, "n"),
                 static_cast<long long>(kStuck));
    for (int i = 0; i < kStuck; ++i) {
      const auto again = s.post("/v1/charges", test::keyed("nowait-new-" + tag + "-" + std::to_string(i)));
      QCOMPARE(again.header("Idempotent-Replayed"), std::string("true"));
    }
    QCOMPARE(s.execution->calls(), 1 + kStuck);  // replays ran nothing
  }

  // The store goes away and comes back. A new key is answered 503 while it is away (nothing
  // runs); a key claimed before, whose work ends while the store is away, has its answer passed on
  // and its record kept (the completion's statement failed on the loop, the blocking complete()
  // retried, then the backlog) and stored when the store returns: its retry replays, nothing runs
  // twice. After the restart the loop's dead connections are replaced.
  void theStoreGoingAwayLosesNothing() {
    test::PrivateCluster pc;
    {
      pg::Connection admin(pc.conninfo());
      store::migrate(admin);
    }
    test::GateServer s(pc.conninfo(), gate::Execution::Thread::Loop, kThreads, [](gate::Host& host) {
      host.enforcer().setCompletionRetry({std::chrono::milliseconds(300), std::chrono::milliseconds(25),
                                          std::chrono::milliseconds(100)});
    });
    QCOMPARE(s.post("/v1/charges", test::keyed("away-before")).status, 201);
    http::Headers held = test::keyed("away-held");
    held.emplace_back("X-Hold", "1");
    auto original = std::async(std::launch::async, [&] { return s.post("/v1/charges", held); });
    QTRY_COMPARE(s.execution->held(), std::size_t(1));  // claimed: the work runs

    pc.cluster().stop();
    s.execution->release();
    const auto answered = original.get();
    QCOMPARE(answered.status, 201);  // the work's own answer, passed on
    const auto during = s.post("/v1/charges", test::keyed("away-during"));
    QCOMPARE(during.status, 503);
    QVERIFY(!during.header("Retry-After").empty());
    QCOMPARE(s.execution->calls(), 2);  // nothing ran while the store was away

    pc.cluster().start();
    QTRY_VERIFY_WITH_TIMEOUT(s.server->host().enforcer().backlog().size() == 0, 20000);  // stored now
    const auto retry = s.post("/v1/charges", test::keyed("away-held"));
    QCOMPARE(retry.status, 201);
    QCOMPARE(retry.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(retry.body, answered.body);
    const auto fresh = s.post("/v1/charges", test::keyed("away-during"));
    QCOMPARE(fresh.status, 201);
    QVERIFY(fresh.header("Idempotent-Replayed").empty());
    QCOMPARE(s.execution->calls(), 3);
  }

  // The write path without waiting batches: keys arriving together share statements, visible
  // in the process's own counters (keys per statement above one).
  void keysArrivingTogetherShareStatements() {
    test::GateServer s(*m_db, gate::Execution::Thread::Loop, kThreads);
    std::vector<std::future<client::ClientResponse>> made;
    auto locker = m_db->connect();
    locker.exec("BEGIN");
    locker.exec("LOCK TABLE idem.keys IN SHARE MODE");
    auto unlock = qScopeGuard([&] { locker.exec("ROLLBACK"); });
    for (int i = 0; i < 12; ++i)
      made.push_back(std::async(std::launch::async, [&s, i] {
        return client::Client("127.0.0.1", s.server->port(), 40s)
            .post("/v1/charges", test::keyed("together-" + std::to_string(i)), R"({"amount":1})");
      }));
    auto observer = m_db->connect();
    QTRY_VERIFY(test::waitingOnLocks(observer) >= 1);
    QTest::qWait(300);  // the rest queue behind the statements held
    unlock.dismiss();
    locker.exec("ROLLBACK");
    for (auto& f : made) QCOMPARE(f.get().status, 201);
    const auto b = s.server->host().gauges().writeBatches;
    QCOMPARE(b.claimedKeys, 12LL);
    QVERIFY2(b.claimBatches < b.claimedKeys,
             qPrintable(QString("%1 claims in %2 statements").arg(b.claimedKeys).arg(b.claimBatches)));
  }
};

QTEST_GUILESS_MAIN(TstWritesWithoutWaiting)
#include "tst_writeswithoutwaiting.moc"
