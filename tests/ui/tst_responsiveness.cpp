// The GUI thread never waits on the database: while a query held by a lock runs on a session's
// worker, the event loop keeps ticking; a cancel stops a running query.
#include <QTimer>
#include <QtTest>

#include "tests/ui/uifixtures.h"
#include "ui/keys/keylistmodel.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

class TestResponsiveness : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;

 private slots:
  void initTestCase() { m_db = std::make_unique<test::TestDatabase>("ui_responsive"); }

  void slowQueryDoesNotBlockTheEventLoop() {
    // The query waits on an advisory lock this test holds: until the test lets go it cannot
    // end, so ticks arriving meanwhile prove the GUI thread is not waiting for it.
    auto locker = m_db->connect();
    locker.exec("SELECT pg_advisory_lock(4711)");
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    bool done = false;
    session.submit<int>(
        this,
        [](pg::Connection& c) {
          return static_cast<int>(c.exec("SELECT pg_advisory_xact_lock(4711), 1 AS one").integer(0, "one"));
        },
        [&](DbResult<int> r) {
          QVERIFY(r.ok());
          done = true;
        });
    QCOMPARE(test::ticksWhileHeld(20), 20);
    QVERIFY2(!done, "the query ended while its lock was held: the test proves nothing");
    locker.exec("SELECT pg_advisory_unlock(4711)");
    QTRY_VERIFY_WITH_TIMEOUT(done, 15000);
  }

  void slowPageKeepsTheModelResponsiveAndCancels() {
    // A page query held up by a lock: the model stays usable, and a new filter cancels the
    // old statement instead of queueing behind it.
    auto locker = m_db->connect();
    locker.exec("BEGIN");
    locker.exec("LOCK TABLE idem.keys IN ACCESS EXCLUSIVE MODE");
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    KeyListModel model(&session);
    model.setFilter(KeyFilter{});
    QVERIFY(model.isLoading());
    QCOMPARE(test::ticksWhileHeld(20), 20);
    QVERIFY(model.isLoading());
    // The archive is not locked: switching to it must not wait for the keys query, which
    // cannot end while the lock is held.
    KeyFilter archived;
    archived.state = KeyState::Archived;
    model.setFilter(archived);
    QTRY_VERIFY_WITH_TIMEOUT(!model.isLoading(), 15000);
    locker.exec("ROLLBACK");
  }

  void cancelStopsARunningStatement() {
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    std::optional<DbError> error;
    const quint64 ticket = session.submit<int>(
        this, [](pg::Connection& c) { return static_cast<int>(c.exec("SELECT pg_sleep(30), 1 AS one").integer(0, "one")); },
        [&](DbResult<int> r) { error = r.error; });
    QTest::qWait(300);
    session.cancel(ticket);
    // The statement sleeps 30 s: an answer inside 15 s is the cancel's.
    QTRY_VERIFY_WITH_TIMEOUT(error.has_value(), 15000);
    QCOMPARE(error->kind, DbError::Kind::Cancelled);
    QCOMPARE(session.state(), DbSession::State::Connected);  // a cancel is not a lost connection
  }

  void cleanupTestCase() { m_db.reset(); }
};

QTEST_MAIN(TestResponsiveness)
#include "tst_responsiveness.moc"
