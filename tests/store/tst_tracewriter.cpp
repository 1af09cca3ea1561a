// The batched trace writer against a real server: what it writes (field by field), that it
// writes in batches rather than per event, that a full queue drops and counts, that a batch
// the server refuses does not block the rest, and that rows queued while the store is down
// are written once it is back.
#include <QtTest>

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
  e.outcome = "replayed";
  e.fingerprint = std::string_view("\x01\xab\xff", 3);
  e.status = 201;
  e.latencyMs = 0.25;
  e.requestId = "req_1";
  return e;
}

long long count(pg::Connection& c, const std::string& where = "true") {
  return c.exec("SELECT count(*) AS n FROM idem.events WHERE " + where).integer(0, "n");
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
      for (int i = 0; i < 5000; ++i) writer.record(replay("k-" + std::to_string(i % 50)));
      QVERIFY(writer.flush());
      QCOMPARE(writer.written(), 5000LL);
    }
    QCOMPARE(count(c), 5000LL);
    // 5 000 events in a handful of COPYs (each a commit), not one transaction each.
    QVERIFY2(commits(c) - before < 20, std::to_string(commits(c) - before).c_str());
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

  void aRefusedBatchIsDroppedAndDoesNotBlockTheNext() {
    test::TestDatabase db("trace_refused");
    store::Pool pool(db.conninfo(), 2);
    trace::TraceWriter writer(pool, {1h, 100000, 100000, true});
    auto bad = replay("k-bad");
    bad.outcome = "not-an-outcome";  // the table's CHECK refuses it
    writer.record(bad);
    QVERIFY(!writer.flush());
    QCOMPARE(writer.dropped(), 1LL);
    writer.record(replay("k-good"));
    QVERIFY(writer.flush());
    auto c = db.connect();
    QCOMPARE(count(c, "idem_key = 'k-good'"), 1LL);
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
    pc.cluster().start();
    QTRY_COMPARE_WITH_TIMEOUT(writer.queued(), std::size_t{0}, 10000);
    QVERIFY(writer.flush());
    pg::Connection c(pc.conninfo());
    QCOMPARE(count(c, "idem_key LIKE 'k-during-%'"), 10LL);
    QCOMPARE(writer.written(), 11LL);
  }
};

QTEST_GUILESS_MAIN(TestTraceWriter)
#include "tst_tracewriter.moc"
