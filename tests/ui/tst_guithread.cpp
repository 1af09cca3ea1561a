// The GUI thread never waits, with the real window on a real store: a long tiers analysis
// (its connection held by a lock) does not delay a key's detail, each having a connection of
// its own; and an explanation is laid out and written as PDF off the GUI thread, the window
// ticking on meanwhile; a session ends without joining its worker. Each proof holds the work with something the test owns, never a clock.
#include <QLineEdit>
#include <QSettings>
#include <QTemporaryDir>
#include <QSemaphore>
#include <QThreadPool>
#include <QTimer>
#include <QScopeGuard>
#include <QtTest>
#include <memory>

#include "tests/ui/uifixtures.h"
#include "ui/common/dbsession.h"
#include "ui/common/filework.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/explain/explainview.h"
#include "ui/keys/keysworkspace.h"
#include "ui/mainwindow/mainwindow.h"
#include "ui/tiers/tiersworkspace.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

class TestGuiThread : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;
  QTemporaryDir m_dir;
  std::unique_ptr<QSettings> m_settings;
  std::unique_ptr<MainWindow> m_window;

  /// Opens the incident's key through the search box, as an agent does; false if it never loaded.
  bool openIncidentKey() {
    KeyDetailWidget* detail = m_window->keys()->detail();
    QSignalSpy loaded(detail, &KeyDetailWidget::detailLoaded);
    m_window->searchBox()->setText(u"pay_1NvQ8A"_s);
    QTest::keyClick(m_window->searchBox(), Qt::Key_Return);
    return loaded.wait(15000);
  }

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ui_guithread");
    test::seedConsoleRows(*m_db);
    m_settings = std::make_unique<QSettings>(m_dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    m_window = std::make_unique<MainWindow>(*m_settings);
    m_window->resize(1400, 900);
    m_window->show();
    m_window->connection()->connectProfile(ConnectionProfile::fromConninfo(QString::fromStdString(m_db->conninfo())));
    QTRY_COMPARE_WITH_TIMEOUT(m_window->browseSession()->state(), DbSession::State::Connected, 15000);
    QTRY_COMPARE_WITH_TIMEOUT(m_window->detailSession()->state(), DbSession::State::Connected, 15000);
  }
  void cleanupTestCase() {
    m_window.reset();
    m_db.reset();
  }

  void endingASessionDoesNotWaitForItsWorker() {
    // A session ended while its worker is inside a job returns at once: the job is held by a
    // semaphore this test owns, which no libpq cancel can release, so a destructor that joined
    // the worker would never return. Its late answer reaches nobody, and the worker's thread
    // ends and is deleted by itself once the job lets go.
    const int endingBefore = DbSession::endingWorkers();
    auto session = std::make_unique<DbSession>(u"ending"_s);
    ConnectParams params;
    params.conninfo = QString::fromStdString(m_db->conninfo());
    session->open(params);
    QTRY_COMPARE_WITH_TIMEOUT(session->state(), DbSession::State::Connected, 15000);
    auto held = std::make_shared<QSemaphore>();
    auto entered = std::make_shared<QSemaphore>();
    bool answered = false;
    session->submit<int>(
        this,
        [held, entered](pg::Connection&) {
          entered->release();
          held->acquire();
          return 1;
        },
        [&](DbResult<int>) { answered = true; });
    QVERIFY2(entered->tryAcquire(1, 15000), "the job never started");
    session.reset();  // the worker is inside the job now
    QCOMPARE(DbSession::endingWorkers(), endingBefore + 1);
    held->release();
    QTRY_COMPARE_WITH_TIMEOUT(DbSession::endingWorkers(), endingBefore, 15000);
    QCoreApplication::processEvents();
    QVERIFY2(!answered, "a job's answer reached an ended session's caller");
  }

  void keyDetailLoadsWhileTiersAnalyses() {
    auto* tiers = m_window->findChild<TiersWorkspace*>();
    QVERIFY(tiers);
    QTRY_COMPARE_WITH_TIMEOUT(tiers->session()->state(), DbSession::State::Connected, 15000);
    // The analysis's connection held by an advisory lock this test owns, as by a large trace:
    // it cannot end before the test lets go, so a detail that loads meanwhile did not wait.
    auto locker = m_db->connect();
    locker.exec("SELECT pg_advisory_lock(4712)");
    bool analysed = false;
    tiers->session()->submit<int>(
        this,
        [](pg::Connection& c) {
          return static_cast<int>(c.exec("SELECT pg_advisory_xact_lock(4712), 1 AS one").integer(0, "one"));
        },
        [&](DbResult<int> r) { analysed = r.ok(); });
    QVERIFY2(openIncidentKey(), "the key's detail never loaded");
    QCOMPARE(m_window->keys()->detail()->key().key, QString::fromLatin1(test::kIncidentKey));
    QVERIFY2(!analysed, "the analysis ended while its lock was held: the test proves nothing");
    locker.exec("SELECT pg_advisory_unlock(4712)");
    QTRY_VERIFY_WITH_TIMEOUT(analysed, 15000);
  }

  void pdfExportRunsOffTheGuiThread() {
    if (m_window->keys()->detail()->key().key != QString::fromLatin1(test::kIncidentKey))
      QVERIFY(openIncidentKey());
    KeyDetailWidget* detail = m_window->keys()->detail();
    detail->setCurrentTab(KeyDetailWidget::ExplainTab);
    QApplication::processEvents();
    ExplainView* view = detail->explainView();
    QVERIFY(!view->markdown().isEmpty());
    QSignalSpy exported(view, &ExplainView::exported);
    QSignalSpy failed(view, &ExplainView::exportFailed);
    const QString path = m_dir.filePath(u"incident.pdf"_s);

    // Every worker of the pool exports run on is held by this test: an export written on the
    // GUI thread would exist as soon as the call returns; one written off it cannot begin until
    // the test lets the workers go, while the event loop ticks (and paints) on.
    QThreadPool* pool = &fileWorkPool();
    auto started = std::make_shared<QSemaphore>();
    auto release = std::make_shared<QSemaphore>();
    const int workers = pool->maxThreadCount();
    bool released = false;
    auto letGo = qScopeGuard([&] {  // a failed check below must not leave the pool blocked
      if (!released) release->release(workers);
    });
    for (int i = 0; i < workers; ++i)
      pool->start([started, release] {
        started->release();
        release->acquire();
      });
    QVERIFY(started->tryAcquire(workers, 15000));
    view->exportInBackground(path, ExplainView::Format::Pdf);
    QVERIFY2(!QFile::exists(path), "the PDF was written before the call returned: the GUI thread wrote it");
    QCOMPARE(test::ticksWhileHeld(20), 20);
    QVERIFY(!QFile::exists(path));
    QCOMPARE(exported.count(), 0);
    release->release(workers);
    released = true;
    QTRY_VERIFY_WITH_TIMEOUT(exported.count() + failed.count() > 0, 20000);
    QCOMPARE(failed.count(), 0);
    QCOMPARE(exported.count(), 1);
    QCOMPARE(exported.at(0).at(0).toString(), path);
    QFile pdf(path);
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QVERIFY(pdf.read(5) == "%PDF-");
    QVERIFY(pdf.size() > 2000);
    // A folder that does not exist: the failure comes back as a signal, nothing is written.
    view->exportInBackground(u"/nonexistent-dir/x.md"_s, ExplainView::Format::Markdown);
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 10000);
    QVERIFY(!failed.at(0).at(1).toString().isEmpty());
  }
};

QTEST_MAIN(TestGuiThread)
#include "tst_guithread.moc"
