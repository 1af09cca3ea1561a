// The console pointed at a real hot standby (pg_basebackup of a private primary). Support staff
// are told to use the read-mostly face on a standby, so every view must work there: browse,
// trace, explain, tiers and their exports. The status bar says how old the data is ("data as of
// 2.3 s ago", from pg_last_xact_replay_timestamp), says so when the standby is promoted under
// it, and when it disappears.
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "core/store/migrations.h"
#include "tests/support/standby.h"
#include "tests/support/testdb.h"
#include "tests/ui/uifixtures.h"
#include "ui/common/dbsession.h"
#include "ui/cases/casesview.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/connection/statuswidget.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/explain/explainview.h"
#include "ui/keys/keylistmodel.h"
#include "ui/keys/keysworkspace.h"
#include "ui/mainwindow/mainwindow.h"
#include "ui/tiers/tiertablemodel.h"
#include "ui/tiers/tiersworkspace.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

namespace {

bool isPdf(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) && file.read(5) == QByteArray("%PDF-");
}

}  // namespace

class TestStandbyStatus : public QObject {
  Q_OBJECT

 private slots:
  // The whole console on a standby, as support uses it: the key list fills, a pasted charge id
  // lands on the key's explanation (trace and resolution read from the standby), Ctrl+P writes
  // the customer's PDF, and the Tiers workspace loads its report and exports it. A view that
  // wrote anything (a temporary table, a settings row) would fail here: a standby refuses writes.
  void everyViewWorksOnAStandby() {
    test::PrivateCluster pc;
    {
      pg::Connection admin(pc.conninfo());
      store::migrate(admin);
      QFile seed(QStringLiteral(IDEM_SOURCE_DIR "/tests/ui/data/console_seed.sql"));
      QVERIFY(seed.open(QIODevice::ReadOnly));
      admin.script(seed.readAll().toStdString());
    }
    test::Standby standby(pc);  // a base backup taken after the seed: the rows are there

    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    const QString folder = dir.filePath(u"cases"_s);
    settings.setValue(u"cases/folder"_s, folder);
    MainWindow window(settings);
    window.resize(1400, 900);
    window.show();
    window.connection()->connectProfile(ConnectionProfile::fromConninfo(QString::fromStdString(standby.conninfo())));
    QTRY_COMPARE_WITH_TIMEOUT(window.browseSession()->state(), DbSession::State::Connected, 15000);
    auto* status = window.findChild<StatusWidget*>();
    QVERIFY(status);
    QTRY_VERIFY_WITH_TIMEOUT(status->text().contains(u"read-only (standby)"_s), 15000);

    // Browse.
    QTRY_VERIFY_WITH_TIMEOUT(window.keys()->keyModel()->rowCount() > 0, 15000);

    // Trace and explain: the incident's second charge id.
    QSignalSpy loaded(window.keys()->detail(), &KeyDetailWidget::detailLoaded);
    QApplication::clipboard()->setText(u"pay_2Kx7Rt"_s);
    QTest::keyClick(&window, Qt::Key_K, Qt::ControlModifier);
    QTRY_VERIFY(window.searchBox()->hasFocus());
    QTest::keyClick(window.searchBox(), Qt::Key_V, Qt::ControlModifier);
    QTest::keyClick(window.searchBox(), Qt::Key_Return);
    QVERIFY(loaded.wait(15000));
    QCOMPARE(window.keys()->detail()->detail().executions(), 2);
    QCOMPARE(window.keys()->detail()->tabs()->currentIndex(), int(KeyDetailWidget::ExplainTab));
    const QString html = window.keys()->detail()->explainView()->report().html;
    QVERIFY2(html.contains(u"<h2>Resolution</h2>"_s) && html.contains(u"Refund "_s), qPrintable(html.left(2000)));

    // Export: the customer's PDF into the case folder.
    QSignalSpy exported(window.keys()->detail()->explainView(), &ExplainView::exported);
    QVERIFY(window.cases()->newCase(u"ZD-3002"_s) > 0);  // the letter quotes the case's ticket
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_P, Qt::ControlModifier);
    QVERIFY(exported.wait(20000));
    QVERIFY2(isPdf(exported.first().first().toString()), qPrintable(exported.first().first().toString()));

    // Tiers: the report (the trace's offsets read from the standby) and its export.
    auto* tiers = window.findChild<TiersWorkspace*>();
    QVERIFY(tiers);
    window.setWorkspace(MainWindow::TiersPage);
    auto shownText = [tiers] {
      QStringList texts;
      for (const auto* label : tiers->findChildren<QLabel*>())
        if (label->isVisible() && !label->text().isEmpty()) texts << label->text();
      return texts.join(u" | "_s);
    };
    QTRY_VERIFY2_WITH_TIMEOUT(tiers->loaded() && !tiers->busy(), qPrintable(shownText()), 20000);
    QVERIFY(!tiers->report()->tiers.empty());
    QVERIFY(tiers->model()->rowCount() > 0);
    const QString tiersPdf = dir.filePath(u"tiers.pdf"_s);
    QVERIFY(tiers->exportPdf(tiersPdf));
    QVERIFY(isPdf(tiersPdf));
    QVERIFY2(status->text().contains(u"read-only (standby)"_s), qPrintable(status->text()));
  }

  void statusBarOnAPrimaryNamesItsStandbys() {
    test::PrivateCluster pc;
    pg::Connection admin(pc.conninfo());
    store::migrate(admin);
    DbSession session(u"primary"_s);
    StatusWidget status(&session);
    session.setPingInterval(200);
    QVERIFY(test::openSession(session, pc.conninfo()));
    QTRY_VERIFY_WITH_TIMEOUT(status.text().contains(u"no standby"_s), 15000);

    test::Standby standby(pc);
    test::waitForStandbys(admin, 1);
    QTRY_VERIFY_WITH_TIMEOUT(status.text().contains(u"1 standby, none synchronous"_s), 15000);
    QVERIFY2(!status.text().contains(u"no standby"_s), qPrintable(status.text()));
  }

  void statusBarOnAStandbyThatIsPromotedThenGone() {
    test::PrivateCluster pc;
    pg::Connection admin(pc.conninfo());
    store::migrate(admin);
    test::Standby standby(pc);
    test::waitForStandbys(admin, 1);
    admin.exec("CREATE TABLE replayed (x int)");  // a transaction for the standby to replay
    pg::Connection onStandby(standby.conninfo());
    QTRY_VERIFY_WITH_TIMEOUT(
        onStandby.exec("SELECT count(*) AS n FROM pg_class WHERE relname = 'replayed'").integer(0, "n") == 1, 30000);

    DbSession session(u"standby"_s);
    StatusWidget status(&session);
    session.setPingInterval(200);
    QVERIFY(test::openSession(session, standby.conninfo()));
    QTRY_VERIFY_WITH_TIMEOUT(status.text().contains(u"data as of"_s), 15000);
    QVERIFY2(status.text().contains(u"read-only (standby)"_s), qPrintable(status.text()));
    static const QRegularExpression age(u"data as of \\d+(\\.\\d)? (s|min) ago"_s);
    QVERIFY2(age.match(status.text()).hasMatch(), qPrintable(status.text()));

    standby.promote();
    QTRY_VERIFY_WITH_TIMEOUT(status.text().contains(u"promoted"_s), 15000);
    QVERIFY2(!status.text().contains(u"data as of"_s), qPrintable(status.text()));

    standby.cluster().stop();
    QTRY_VERIFY_WITH_TIMEOUT(status.text().contains(u"the standby is gone"_s), 15000);
  }
};

QTEST_MAIN(TestStandbyStatus)
#include "tst_standbystatus.moc"
