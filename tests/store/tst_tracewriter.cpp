// The batched trace writer against a real server: what it writes (field by field), that it
// writes in batches rather than per event, that a full queue drops and counts, that a batch
// the server refuses does not block the rest, and that rows queued while the store is down
// are written once it is back, that a retry storm on one key folds into one counted row, and
// that executions are never folded or dropped.
#include <QtTest>
#include <thread>
#include <vector>

#include "core/store/migrations.h"
#include "core/store/pool.h"
#include "core/trace/tracewriter.h"
#include "tests/support/testdb.h"

using namespace idem;
using namespace std::chrono_literals;

namespace {

trace::Event replay(std::string_view key, long long atMs = 1'764'676'800'123LL) {
  trace::Event e;
  e.atMs = atMs;
  e.tenant = "acme";
  e.endpoint = "POST /v1/payments";
  e.key = key;
  e.generation = 1;
  e.tier = "payments";
  e.outcome = trace::Outcome::Replayed;
  e.fingerprint = std::string_view("\x01\xab\xff", 3);
  e.status = 201;
  e.latencyMs = 0.25;
  e.requestId = "req_1";
  return e;
}

long long count(pg::Connection& c, const std::string& where = "true") {
  return c.exec("SELECT count(*) AS n FROM idem.events WHERE " + where).integer(0, "n");
}

// The server refuses rows of these keys (a quoted SQL list of literals from the test itself).
void refuseKeys(const test::TestDatabase& db, const std::string& keys) {
  db.connect().exec("ALTER TABLE idem.events ADD CONSTRAINT test_refused_keys CHECK (idem_key NOT IN (" + keys + "))");
}

long long commits(pg::Connection& c) {
  c.exec("SELECT pg_stat_clear_snapshot()");
  return c.exec("SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()").integer(0, "n");
}

}  // namespace

class TestTraceWriter : public QObject {
  Q_OBJECT

 private slots:
  void writesEachFieldAsRecorded() {
    test::TestDatabase db("trace_fields");
    store::Pool pool(db.conninfo(), 2);
    trace::TraceWriter writer(pool);
    auto e = replay("k-1");
    const std::string detail = "tab\there, back\\slash\nnewline";
    e.detail = detail;
    writer.record(e);
    auto bare = replay("k-2");
    bare.fingerprint = {};
    bare.generation = 0;
    bare.requestId = {};
    writer.record(bare);
    QVERIFY(writer.flush());
    QCOMPARE(writer.written(), 2LL);

    auto c = db.connect();
    auto r = c.exec("SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') AS at, tenant, endpoint, "
                    "generation, tier, outcome, encode(fingerprint, 'hex') AS fp, status, latency_ms, request_id, "
                    "detail FROM idem.events WHERE idem_key = 'k-1'");
    QCOMPARE(r.rows(), 1);
    QCOMPARE(r.str(0, "at"), std::string("2025-12-02 12:00:00.123"));
    QCOMPARE(r.str(0, "tenant"), std::string("acme"));
    QCOMPARE(r.str(0, "endpoint"), std::string("POST /v1/payments"));
    QCOMPARE(r.integer(0, "generation"), 1LL);
    QCOMPARE(r.str(0, "outcome"), std::string("replayed"));
    QCOMPARE(r.str(0, "fp"), std::string("01abff"));
    QCOMPARE(r.integer(0, "status"), 201LL);
    QCOMPARE(r.real(0, "latency_ms"), 0.25);
    QCOMPARE(r.str(0, "request_id"), std::string("req_1"));
    QCOMPARE(r.str(0, "detail"), detail);
    auto nulls = c.exec("SELECT fingerprint IS NULL AND generation IS NULL AND request_id IS NULL AND detail IS NULL "
                        "AS all_null FROM idem.events WHERE idem_key = 'k-2'");
    QVERIFY(nulls.boolean(0, "all_null"));
  }

  void writesInBatchesNotPerEvent() {
    test::TestDatabase db("trace_batches");
    store::Pool pool(db.conninfo(), 2);
    auto c = db.connect();
    const long long before = commits(c);
    {
      trace::TraceWriter writer(pool, {200ms, 100000, 100000, true});
      for (int i = 0; i < 5000; ++i) writer.record(replay("k-" + std::to_string(i)));
      QVERIFY(writer.flush());
      QCOMPARE(writer.written(), 5000LL);
    }
    QCOMPARE(count(c), 5000LL);
    // 5 000 events in a handful of COPYs (each a commit), not one transaction each.
    QVERIFY2(commits(c) - before < 20, std::to_string(commits(c) - before).c_str());
  }

  void foldsAStormOnOneKeyIntoOneCountedRow() {
    test::TestDatabase db("trace_fold");
    store::Pool pool(db.conninfo(), 2);
    trace::TraceWriter writer(pool, {1h, 100000, 100000, true, 3});
    const long long t0 = 1'764'676'800'000LL;
    std::vector<std::string> requestIds;
    for (int i = 0; i < 1000; ++i) requestIds.push_back("req_" + std::to_string(i));
    for (int i = 0; i < 1000; ++i) {
      auto e = replay("storm", t0 + i);
      e.requestId = requestIds[static_cast<std::size_t>(i)];
      e.latencyMs = i == 500 ? 9.5 : 0.5;
      writer.record(e);
    }
    for (int i = 0; i < 2; ++i) writer.record(replay("calm", t0 + i));
    for (int i = 0; i < 5; ++i) {
      auto e = replay("storm", t0 + 2000 + i);
      e.outcome = trace::Outcome::Conflict;  // another decision on the same key: folded on its own
      e.status = 409;
      writer.record(e);
    }
    auto otherBody = replay("storm", t0 + 3000);
    otherBody.fingerprint = "\x02";  // not identical: a row of its own
    writer.record(otherBody);
    QVERIFY(writer.flush());
    QCOMPARE(writer.written(), 1008LL);

    auto c = db.connect();
    QCOMPARE(count(c, "idem_key = 'storm' AND outcome = 'replayed'"), 5LL);  // 3 + the folded row + other body
    QCOMPARE(count(c, "idem_key = 'storm' AND outcome = 'replayed' AND repeats = 1 AND last_at IS NULL"), 4LL);
    auto folded = c.exec("SELECT repeats, (extract(epoch FROM at) * 1000)::bigint AS first_ms, "
                         "(extract(epoch FROM last_at) * 1000)::bigint AS last_ms, request_id, latency_ms, status, "
                         "encode(fingerprint, 'hex') AS fp FROM idem.events WHERE idem_key = 'storm' AND repeats > 1 "
                         "AND outcome = 'replayed'");
    QCOMPARE(folded.rows(), 1);
    QCOMPARE(folded.integer(0, "repeats"), 997LL);
    QCOMPARE(folded.integer(0, "first_ms"), t0 + 3);
    QCOMPARE(folded.integer(0, "last_ms"), t0 + 999);
    QCOMPARE(folded.str(0, "request_id"), std::string("req_999"));  // the last one folded
    QCOMPARE(folded.real(0, "latency_ms"), 9.5);                    // the slowest one folded
    QCOMPARE(folded.integer(0, "status"), 201LL);
    QCOMPARE(folded.str(0, "fp"), std::string("01abff"));
    QCOMPARE(c.exec("SELECT sum(repeats) AS n FROM idem.events WHERE idem_key = 'storm' AND outcome = 'replayed'")
                 .integer(0, "n"),
             1001LL);
    QCOMPARE(c.exec("SELECT sum(repeats) AS n FROM idem.events WHERE outcome = 'conflict'").integer(0, "n"), 5LL);
    QCOMPARE(count(c, "outcome = 'conflict'"), 4LL);
    QCOMPARE(count(c, "idem_key = 'calm'"), 2LL);  // ordinary retries are never folded
  }

  void aFoldNeverSpansBatchesAndCanBeSwitchedOff() {
    test::TestDatabase db("trace_fold_batches");
    store::Pool pool(db.conninfo(), 2);
    auto c = db.connect();
    {
      trace::TraceWriter writer(pool, {1h, 100000, 100000, true, 3});
      for (int batch = 0; batch < 2; ++batch) {
        for (int i = 0; i < 5; ++i) writer.record(replay("twice", 1'764'676'800'000LL + batch * 100 + i));
        QVERIFY(writer.flush());
      }
      QCOMPARE(writer.written(), 10LL);
    }
    QCOMPARE(count(c, "idem_key = 'twice'"), 8LL);  // per batch: 3 rows + one row of 2
    QCOMPARE(count(c, "idem_key = 'twice' AND repeats = 2"), 2LL);
    {
      trace::TraceWriter writer(pool, {1h, 100000, 100000, true, 0});
      for (int i = 0; i < 10; ++i) writer.record(replay("unfolded"));
      QVERIFY(writer.flush());
    }
    QCOMPARE(count(c, "idem_key = 'unfolded' AND repeats = 1"), 10LL);
  }

  void manyThreadsLoseNoDecisionWhileFolding() {
    test::TestDatabase db("trace_fold_threads");
    store::Pool pool(db.conninfo(), 2);
    constexpr int kThreads = 8;
    constexpr int kPerThread = 5000;
    {
      trace::TraceWriter writer(pool, {5ms, 1000, 100000, true, 3});
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&writer, t] {
          for (int i = 0; i < kPerThread; ++i) {
            // Half a storm on one key, half distinct keys: folding and plain rows interleave.
            const std::string key = i % 2 == 0 ? std::string("hot") : "t" + std::to_string(t) + "-" + std::to_string(i);
            const std::string requestId = "req_" + std::to_string(t) + "_" + std::to_string(i);
            auto e = replay(key, 1'764'676'800'000LL + i);
            e.requestId = requestId;
            writer.record(e);
          }
        });
      for (auto& th : threads) th.join();
      QVERIFY(writer.flush());
      QCOMPARE(writer.written(), static_cast<long long>(kThreads * kPerThread));
      QCOMPARE(writer.dropped(), 0LL);
    }
    auto c = db.connect();
    QCOMPARE(c.exec("SELECT sum(repeats) AS n FROM idem.events").integer(0, "n"),
             static_cast<long long>(kThreads * kPerThread));
    QCOMPARE(count(c, "idem_key <> 'hot'"), static_cast<long long>(kThreads * kPerThread / 2));
    QCOMPARE(c.exec("SELECT sum(repeats) AS n FROM idem.events WHERE idem_key = 'hot'").integer(0, "n"),
             static_cast<long long>(kThreads * kPerThread / 2));
    QVERIFY(count(c, "idem_key = 'hot'") < kThreads * kPerThread / 2);  // the storm folded
    QCOMPARE(count(c, "repeats > 1 AND (last_at IS NULL OR last_at < at)"), 0LL);
  }

  void aFullQueueDropsNewEventsAndCountsThem() {
    test::TestDatabase db("trace_full");
    store::Pool pool(db.conninfo(), 2);
    trace::TraceWriter writer(pool, {1h, 100000, 5, true});
    for (int i = 0; i < 8; ++i) writer.record(replay("k-" + std::to_string(i)));
    QCOMPARE(writer.queued(), std::size_t{5});
    QCOMPARE(writer.dropped(), 3LL);
    QVERIFY(writer.flush());  // the drops happened before this flush: what it waits for is written
    auto c = db.connect();
    QCOMPARE(count(c), 5LL);
    QCOMPARE(count(c, "idem_key IN ('k-0', 'k-4')"), 2LL);  // the oldest kept, the newest dropped
  }

  void executionsAreNeitherDroppedNorFolded() {
    test::TestDatabase db("trace_executions");
    store::Pool pool(db.conninfo(), 2);
    trace::TraceWriter writer(pool, {1h, 100000, 2, true, 1});
    const std::string fillers[] = {"k-full-0", "k-full-1", "k-full-2", "k-full-3"};
    for (const auto& key : fillers) writer.record(replay(key));  // 2 kept, then the queue is full
    QCOMPARE(writer.dropped(), 2LL);
    const long long t0 = 1'764'676'800'000LL;
    for (int i = 0; i < 3; ++i) {  // identical executions (a taken-over lease can repeat one)
      auto e = replay("k-run", t0 + i);
      e.outcome = trace::Outcome::Executed;
      e.execution = true;
      writer.record(e);
    }
    QCOMPARE(writer.dropped(), 2LL);
    QCOMPARE(writer.queued(), std::size_t{5});
    QVERIFY(writer.flush());
    auto c = db.connect();
    QCOMPARE(count(c, "idem_key = 'k-run' AND outcome = 'executed' AND repeats = 1"), 3LL);
    QCOMPARE(count(c, "idem_key LIKE 'k-full-%'"), 2LL);
  }

  void aRefusedBatchIsDroppedAndDoesNotBlockTheNext() {
    test::TestDatabase db("trace_refused");
    store::Pool pool(db.conninfo(), 2);
    trace::TraceWriter writer(pool, {1h, 100000, 100000, true});
    refuseKeys(db, "'k-bad'");  // a typed outcome cannot be misspelt: a CHECK of this test's refuses
    writer.record(replay("k-bad"));
    QVERIFY(!writer.flush());
    QCOMPARE(writer.dropped(), 1LL);
    writer.record(replay("k-good"));
    QVERIFY(writer.flush());
    auto c = db.connect();
    QCOMPARE(count(c, "idem_key = 'k-good'"), 1LL);
  }

  void bytesPostgresCannotStoreCostNoRow() {
    // A value that is not UTF-8 or holds a NUL is made storable (U+FFFD) before it reaches the
    // batch: its row is written, and so are the thousand rows around it.
    test::TestDatabase db("trace_badbytes");
    store::Pool pool(db.conninfo(), 2);
    trace::TraceWriter writer(pool, {1h, 100000, 100000, true});
    for (int i = 0; i < 500; ++i) writer.record(replay("k-before-" + std::to_string(i)));
    auto badKey = replay("caf\xe9");
    writer.record(badKey);
    auto badTenant = replay("k-tenant");
    badTenant.tenant = "ac\xc3";  // truncated sequence
    writer.record(badTenant);
    const std::string nulDetail("a\0b", 3);
    auto nul = replay("k-nul");
    nul.detail = nulDetail;
    nul.outcome = trace::Outcome::Executed;
    nul.execution = true;
    writer.record(nul);
    for (int i = 0; i < 500; ++i) writer.record(replay("k-after-" + std::to_string(i)));
    QVERIFY(writer.flush());
    QCOMPARE(writer.dropped(), 0LL);
    QCOMPARE(writer.written(), 1003LL);
    QCOMPARE(writer.repaired(), 3LL);
    auto c = db.connect();
    QCOMPARE(count(c), 1003LL);
    QCOMPARE(count(c, "idem_key = 'caf' || U&'\\FFFD'"), 1LL);
    QCOMPARE(count(c, "tenant = 'ac' || U&'\\FFFD'"), 1LL);
    QCOMPARE(count(c, "detail = 'a' || U&'\\FFFD' || 'b' AND outcome = 'executed'"), 1LL);
  }

  void aRowTheServerRefusesCostsOnlyItself() {
    // The server may still refuse a row (here a CHECK this test adds): the failed batch is split
    // until the refused row stands alone; it is dropped and counted, every other row is written.
    test::TestDatabase db("trace_isolate");
    store::Pool pool(db.conninfo(), 2);
    auto c = db.connect();
    refuseKeys(db, "'k-337', 'k-338', 'k-901'");
    trace::TraceWriter writer(pool, {1h, 100000, 100000, true, 3});
    for (int i = 0; i < 1000; ++i) {
      const std::string key = "k-" + std::to_string(i);  // an Event holds views: keep the key alive
      auto e = replay(key);
      if (i % 100 == 0) {
        e.outcome = trace::Outcome::Executed;
        e.execution = true;
      }
      writer.record(e);
    }
    for (int i = 0; i < 50; ++i) writer.record(replay("storm"));  // a folded row in the same batch
    QVERIFY(!writer.flush());
    QCOMPARE(writer.dropped(), 3LL);
    QCOMPARE(writer.refused(), 3LL);
    QCOMPARE(writer.written(), 1047LL);
    QCOMPARE(count(c, "idem_key LIKE 'k-%'"), 997LL);
    QCOMPARE(count(c, "outcome = 'executed'"), 10LL);
    QCOMPARE(c.exec("SELECT sum(repeats) AS n FROM idem.events WHERE idem_key = 'storm'").integer(0, "n"), 50LL);
    QCOMPARE(count(c, "idem_key IN ('k-337', 'k-338', 'k-901')"), 0LL);
  }

  void rowsQueuedDuringAnOutageAreWrittenAfterIt() {
    test::PrivateCluster pc;
    {
      pg::Connection c(pc.conninfo());
      store::migrate(c);
    }
    store::Pool pool(pc.conninfo(), 2);
    trace::TraceWriter writer(pool, {50ms, 100000, 100000, true});
    writer.record(replay("k-before"));
    QVERIFY(writer.flush());
    pc.cluster().stop();
    for (int i = 0; i < 10; ++i) writer.record(replay("k-during-" + std::to_string(i)));
    QTest::qWait(300);  // several failed attempts
    QCOMPARE(writer.queued(), std::size_t{10});
    QCOMPARE(writer.dropped(), 0LL);
    // A storm while the store is down: counted into a few rows, not queued one by one.
    for (int i = 0; i < 5000; ++i) writer.record(replay("k-storm-during"));
    QTest::qWait(200);
    QVERIFY2(writer.queued() < 100, std::to_string(writer.queued()).c_str());
    pc.cluster().start();
    QTRY_COMPARE_WITH_TIMEOUT(writer.queued(), std::size_t{0}, 10000);
    QVERIFY(writer.flush());
    pg::Connection c(pc.conninfo());
    QCOMPARE(count(c, "idem_key LIKE 'k-during-%'"), 10LL);
    QCOMPARE(c.exec("SELECT sum(repeats) AS n FROM idem.events WHERE idem_key = 'k-storm-during'").integer(0, "n"),
             5000LL);
    QCOMPARE(writer.written(), 5011LL);
    QCOMPARE(writer.dropped(), 0LL);
  }
};

QTEST_GUILESS_MAIN(TestTraceWriter)
#include "tst_tracewriter.moc"
