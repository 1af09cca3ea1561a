// pg::Transaction against a real server: committed only by commit(), rolled back when it goes
// out of scope otherwise (an exception included), joining a caller's transaction without ending
// it, and a pipeline's transaction rolled back unless its COMMIT went through. And the cancel
// handle stops a running statement from another thread.
#include <QtTest>
#include <thread>

#include "core/store/transaction.h"
#include "tests/support/testdb.h"

using namespace idem;

class TestTransaction : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;

  long long rows(pg::Connection& c) { return c.exec("SELECT count(*) AS n FROM public.t").integer(0, "n"); }

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("transaction", test::Schema::None);
    m_db->connect().exec("CREATE TABLE public.t (v int)");
  }
  void init() { m_db->connect().exec("TRUNCATE public.t"); }
  void cleanupTestCase() { m_db.reset(); }

  void commitKeepsTheWrites() {
    auto c = m_db->connect();
    {
      pg::Transaction tx(c);
      QCOMPARE(c.transactionState(), pg::TxState::InTransaction);
      c.exec("INSERT INTO public.t VALUES (1)");
      tx.commit();
    }
    QCOMPARE(c.transactionState(), pg::TxState::Idle);
    QCOMPARE(rows(c), 1LL);
  }

  void leavingWithoutCommitRollsBack() {
    auto c = m_db->connect();
    try {
      pg::Transaction tx(c);
      c.exec("INSERT INTO public.t VALUES (1)");
      c.exec("SELECT 1/0");  // fails: the transaction is aborted, the exception leaves the scope
      tx.commit();
      QFAIL("no error");
    } catch (const pg::QueryError& e) {
      QCOMPARE(e.sqlstate(), std::string("22012"));
    }
    QCOMPARE(c.transactionState(), pg::TxState::Idle);
    QCOMPARE(rows(c), 0LL);
    {
      pg::Transaction tx(c);
      c.exec("INSERT INTO public.t VALUES (2)");
    }  // an early return: no commit
    QCOMPARE(rows(c), 0LL);
  }

  void joiningLeavesTheCallersTransactionOpen() {
    auto c = m_db->connect();
    pg::Transaction outer(c);
    c.exec("INSERT INTO public.t VALUES (1)");
    {
      auto inner = pg::Transaction::joinOrBegin(c, pg::Transaction::Mode::ReadOnlySnapshot);
      QVERIFY(!inner.owned());
      QCOMPARE(rows(c), 1LL);
      inner.commit();
    }
    QCOMPARE(c.transactionState(), pg::TxState::InTransaction);  // neither committed nor rolled back
    outer.commit();
    QCOMPARE(rows(c), 1LL);
    // Alone, the same call begins a read-only snapshot of its own.
    auto own = pg::Transaction::joinOrBegin(c, pg::Transaction::Mode::ReadOnlySnapshot);
    QVERIFY(own.owned());
    QVERIFY_THROWS_EXCEPTION(pg::QueryError, c.exec("INSERT INTO public.t VALUES (2)"));
  }

  void aFailedPipelineIsRolledBack() {
    auto c = m_db->connect();
    const std::vector<std::pair<std::string, std::vector<pg::Param>>> batch{
        {"BEGIN", {}}, {"INSERT INTO public.t VALUES (1)", {}}, {"SELECT 1/0", {}}, {"COMMIT", {}}};
    {
      auto tx = pg::Transaction::begunByPipeline(c);
      QVERIFY_THROWS_EXCEPTION(pg::QueryError, (void)c.pipeline(batch));
    }
    QCOMPARE(c.transactionState(), pg::TxState::Idle);
    QCOMPARE(rows(c), 0LL);
    {
      auto tx = pg::Transaction::begunByPipeline(c);
      (void)c.pipeline({{"BEGIN", {}}, {"INSERT INTO public.t VALUES (1)", {}}, {"COMMIT", {}}});
      tx.committedByPipeline();
    }
    QCOMPARE(rows(c), 1LL);
  }

  // A pipeline sent on every request (a completion with its ledger row) is not parsed and
  // planned every time: its statements with parameters are prepared once per connection, the
  // same statement twice in one pipeline too.
  void aPipelinesStatementsArePreparedOnce() {
    auto c = m_db->connect();
    const std::string insert = "INSERT INTO public.t VALUES ($1::integer)";
    for (int round = 0; round < 3; ++round) {
      auto tx = pg::Transaction::begunByPipeline(c);
      auto results = c.pipeline({{"BEGIN", {}}, {insert, {round * 2}}, {insert, {round * 2 + 1}}, {"COMMIT", {}}});
      tx.committedByPipeline();
      QCOMPARE(results.size(), std::size_t{4});  // one per statement, none for the PREPARE
    }
    QCOMPARE(rows(c), 6LL);
    auto prepared = c.exec("SELECT count(*) AS n, coalesce(sum(generic_plans + custom_plans), 0) AS runs "
                           "FROM pg_prepared_statements WHERE statement = $1",
                           {insert});
    QCOMPARE(prepared.integer(0, "n"), 1LL);
    QCOMPARE(prepared.integer(0, "runs"), 6LL);
  }

  void cancelHandleStopsARunningStatement() {
    auto c = m_db->connect();
    const pg::CancelHandle cancel(c);
    bool sent = false;
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      sent = cancel.send();
    });
    QElapsedTimer t;
    t.start();
    try {
      c.exec("SELECT pg_sleep(20)");
      QFAIL("the statement was not cancelled");
    } catch (const pg::QueryError& e) {
      QCOMPARE(e.sqlstate(), std::string("57014"));
    }
    canceller.join();
    QVERIFY(sent);
    QVERIFY(t.elapsed() < 10000);
    QCOMPARE(c.exec("SELECT 1 AS one").integer(0, "one"), 1LL);  // the connection lives on
  }
};

QTEST_GUILESS_MAIN(TestTransaction)
#include "tst_transaction.moc"
