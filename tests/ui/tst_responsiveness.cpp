// The GUI thread never waits on the database: while a query slowed by pg_sleep runs on a
// session's worker, the event loop keeps its timer ticks on time; a cancel stops the query.
#include <QElapsedTimer>
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
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    bool done = false;
    QElapsedTimer t;
    t.start();
    session.submit<int>(
        this, [](pg::Connection& c) { return static_cast<int>(c.exec("SELECT pg_sleep(1.5), 1 AS one").integer(0, "one")); },
        [&](DbResult<int> r) {
          QVERIFY(r.ok());
          done = true;
        });
    const qint64 worst = test::worstTickGap([&] { return done; }, 10000);
    QVERIFY(done);
    QVERIFY2(t.elapsed() >= 1400, "the query did not really sleep");
    QVERIFY2(worst < 100, qPrintable(u"event loop stalled for %1 ms"_s.arg(worst)));
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
    const qint64 worst = test::worstTickGap([] { return false; }, 500);
    QVERIFY2(worst < 100, qPrintable(u"event loop stalled for %1 ms"_s.arg(worst)));
    QVERIFY(model.isLoading());
    // The archive is not locked: switching to it must not wait for the keys query.
    KeyFilter archived;
    archived.state = KeyState::Archived;
    QElapsedTimer t;
    t.start();
    model.setFilter(archived);
    QTRY_VERIFY_WITH_TIMEOUT(!model.isLoading(), 5000);
    QVERIFY2(t.elapsed() < 3000, "the new filter waited behind the blocked query");
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
    QElapsedTimer t;
    t.start();
    session.cancel(ticket);
    QTRY_VERIFY_WITH_TIMEOUT(error.has_value(), 5000);
    QCOMPARE(error->kind, DbError::Kind::Cancelled);
    QVERIFY(t.elapsed() < 5000);
    QCOMPARE(session.state(), DbSession::State::Connected);  // a cancel is not a lost connection
  }

  void cleanupTestCase() { m_db.reset(); }
};

QTEST_MAIN(TestResponsiveness)
#include "tst_responsiveness.moc"
