// The agent's case book (issue 19 item 6): a local SQLite file through Qt SQL, schema versioned
// by user_version, that survives restarts: a case with a note is there again after the window
// is destroyed and made anew; lookups and exports land in the current case.
#include <QClipboard>
#include <QDir>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/ui/uifixtures.h"
#include "ui/cases/casebook.h"
#include "ui/cases/caselistmodel.h"
#include "ui/cases/casesview.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/explain/explainview.h"
#include "ui/keys/keysworkspace.h"
#include "ui/mainwindow/mainwindow.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

class TestCaseBook : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;

 private slots:
  void initTestCase() {
    QVERIFY2(QSqlDatabase::isDriverAvailable(u"QSQLITE"_s), "the Qt 6 SQLite plugin (libqt6sql6-sqlite) is missing");
    m_db = std::make_unique<test::TestDatabase>("ui_casebook");
    test::seedConsoleRows(*m_db);
  }

  void schemaIsVersionedAndMigratedOnce() {
    QTemporaryDir dir;
    const QString path = dir.filePath(u"book/casebook.sqlite"_s);
    {
      CaseBook book;
      QVERIFY2(book.open(path), qPrintable(book.error()));
      QCOMPARE(book.schemaVersion(), CaseBook::kSchemaVersion);
      QVERIFY(book.openCase(u"T-1"_s) > 0);
      QVERIFY(book.saveScenario(u"charge twice"_s, u"{\"ttl\":\"30m\"}"_s));
      QVERIFY(book.saveScenario(u"charge twice"_s, u"{\"ttl\":\"24h\"}"_s));  // saved again: replaced
    }
    CaseBook again;
    QVERIFY2(again.open(path), qPrintable(again.error()));  // no second CREATE TABLE
    QCOMPARE(again.findCases().size(), std::size_t(1));
    QCOMPARE(again.scenarios().size(), std::size_t(1));
    QCOMPARE(again.scenarios().front().json, u"{\"ttl\":\"24h\"}"_s);
    // A newer console's file is refused with a clear reason, and left as it is.
    {
      auto db = QSqlDatabase::addDatabase(u"QSQLITE"_s, u"raw"_s);
      db.setDatabaseName(dir.filePath(u"newer.sqlite"_s));
      QVERIFY(db.open());
      QSqlQuery(u"PRAGMA user_version = 99"_s, db).exec();
      db.close();
    }
    QSqlDatabase::removeDatabase(u"raw"_s);
    CaseBook newer;
    QVERIFY(!newer.open(dir.filePath(u"newer.sqlite"_s)));
    QVERIFY2(newer.error().contains(u"newer console"_s), qPrintable(newer.error()));
  }

  void findsCasesByTicketNoteKeyOrResourceLiterally() {
    QTemporaryDir dir;
    CaseBook book;
    QVERIFY(book.open(dir.filePath(u"c.sqlite"_s)));
    const qint64 a = book.openCase(u"ZD-1001"_s);
    book.recordLookup(u"pay_1NvQ8A"_s, u"acct_42"_s, u"POST /v1/payments"_s, u"k-1"_s, 1, u"pay_1NvQ8A"_s);
    QVERIFY(book.setNotes(a, u"customer charged twice; 100% sure"_s));
    const qint64 b = book.openCase(u"ZD-1002"_s);
    QVERIFY(b > a);
    QCOMPARE(book.findCases(u"zd-1001"_s).size(), std::size_t(1));
    QCOMPARE(book.findCases(u"pay_1NvQ"_s).front().id, a);
    QCOMPARE(book.findCases(u"100%"_s).front().id, a);
    QCOMPARE(book.findCases(u"1_0"_s).size(), std::size_t(0));  // '_' is not a wildcard
    QCOMPARE(book.findCases().size(), std::size_t(2));
    QCOMPARE(book.recentLookups().front().searched, u"pay_1NvQ8A"_s);
  }

  void aCaseWithANoteSurvivesARestartOfTheWindow() {
    QTemporaryDir dir;
    const QString ini = dir.filePath(u"s.ini"_s);
    const QString folder = dir.filePath(u"cases"_s);
    {
      QSettings settings(ini, QSettings::IniFormat);
      settings.setValue(u"cases/folder"_s, folder);
      MainWindow window(settings);
      window.show();
      window.connection()->connectProfile(ConnectionProfile::fromConninfo(QString::fromStdString(m_db->conninfo())));
      QTRY_COMPARE_WITH_TIMEOUT(window.browseSession()->state(), DbSession::State::Connected, 15000);
      window.setWorkspace(MainWindow::CasesPage);
      QVERIFY(window.cases()->newCase(u"ZD-4711"_s) > 0);
      window.cases()->notes()->setFocus();
      QTest::keyClicks(window.cases()->notes(), u"Refund the second charge"_s);
      // The agent looks the customer's id up and exports: both go into the open case.
      QSignalSpy loaded(window.keys()->detail(), &KeyDetailWidget::detailLoaded);
      QApplication::clipboard()->setText(u"pay_1NvQ8A"_s);
      QTest::keyClick(&window, Qt::Key_K, Qt::ControlModifier);
      QTest::keyClick(window.searchBox(), Qt::Key_V, Qt::ControlModifier);
      QTest::keyClick(window.searchBox(), Qt::Key_Return);
      QVERIFY(loaded.wait(10000));
      QSignalSpy exported(window.keys()->detail()->explainView(), &ExplainView::exported);
      QTest::keyClick(&window, Qt::Key_P, Qt::ControlModifier);
      QVERIFY(exported.wait(20000));
    }  // destroyed without close(): the note typed a moment ago is written all the same
    QSettings settings(ini, QSettings::IniFormat);
    MainWindow window(settings);
    QCOMPARE(window.cases()->model()->rowCount(), 1);
    const CaseBook::Case* c = window.cases()->model()->caseAt(0);
    QCOMPARE(c->ticket, u"ZD-4711"_s);
    QCOMPARE(c->notes, u"Refund the second charge"_s);
    QCOMPARE(c->keys.size(), std::size_t(1));
    QCOMPARE(c->keys.front().key, QString::fromLatin1(test::kIncidentKey));
    QCOMPARE(c->keys.front().resource, u"pay_1NvQ8A"_s);
    QCOMPARE(c->exports.size(), std::size_t(1));
    QVERIFY(c->exports.front().path.startsWith(folder));
    QVERIFY(QFile::exists(c->exports.front().path));
    // Found again by the resource id, from the Cases view's box.
    window.cases()->findBox()->setText(u"pay_1NvQ8A"_s);
    QCOMPARE(window.cases()->model()->rowCount(), 1);
    window.cases()->findBox()->setText(u"no such ticket"_s);
    QCOMPARE(window.cases()->model()->rowCount(), 0);
  }

  void cleanupTestCase() { m_db.reset(); }
};

QTEST_MAIN(TestCaseBook)
#include "tst_casebook.moc"
