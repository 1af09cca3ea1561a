// Issue 29, item 3: when the store goes away, what is on screen says how old it is, its times
// stop counting, and nothing of it is exported until it is read again. The store really goes
// away: a private PostgreSQL cluster is stopped under the window, then started again.
#include <QAction>
#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>

#include "tests/ui/consolewindow.h"
#include "tests/ui/uifixtures.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/explain/explainview.h"
#include "ui/keys/keylistmodel.h"
#include "ui/keys/keysworkspace.h"
#include "ui/mainwindow/mainwindow.h"
#include "ui/mainwindow/messagebar.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

namespace {
/// "expires in 3 h", "expired 2 h ago", "in 3 h", "2 h ago": a time that counts on.
bool relative(const QString& text) {
  static const QRegularExpression counting(u"(^|expires )in \\d|\\d \\S+ ago"_s);
  return counting.match(text).hasMatch();
}
}  // namespace

class TestStoreLoss : public QObject {
  Q_OBJECT

 private slots:
  void aLostStoreMarksWhatIsShownAndHoldsTheExport() {
    test::PrivateCluster cluster;
    pg::Connection(cluster.conninfo()).exec("CREATE DATABASE console");
    const std::string conninfo = cluster.conninfo("console");
    std::string out;
    QVERIFY2(test::runIdemctl({"migrate", "--db", conninfo}, &out) == 0, out.c_str());
    QFile seed(QStringLiteral(IDEM_SOURCE_DIR "/tests/ui/data/console_seed.sql"));
    QVERIFY(seed.open(QIODevice::ReadOnly));
    pg::Connection(conninfo).script(seed.readAll().toStdString());

    test::ConsoleDesk desk;
    QVERIFY(desk.open(conninfo));
    MainWindow& window = *desk.window;
    const QString folder = desk.caseFolder;
    KeysWorkspace* keys = window.keys();
    QSignalSpy loaded(keys->detail(), &KeyDetailWidget::detailLoaded);
    window.searchBox()->setText(u"pay_1NvQ8A"_s);
    QTest::keyClick(window.searchBox(), Qt::Key_Return);
    QVERIFY(loaded.wait(10000));
    QTRY_COMPARE_WITH_TIMEOUT(keys->infoLabel()->text(), u"1 key(s) loaded"_s, 10000);
    QVERIFY2(relative(keys->detail()->headerText()), qPrintable(keys->detail()->headerText()));
    auto* exportCase = window.findChild<QAction*>(u"exportForCustomer"_s);
    QVERIFY(exportCase->isEnabled());
    const QModelIndex expires = keys->keyModel()->index(0, KeyListModel::ColExpires);
    QVERIFY2(relative(expires.data().toString()), qPrintable(expires.data().toString()));

    cluster.cluster().stop();
    QTRY_VERIFY_WITH_TIMEOUT(window.browseSession()->state() != DbSession::State::Connected, 20000);
    // The list, the header and the table's times read as old data, not as live counters.
    QTRY_VERIFY2(keys->infoLabel()->text().contains(u"store unreachable"_s), qPrintable(keys->infoLabel()->text()));
    static const QRegularExpression asOf(u"^as of \\d\\d:\\d\\d \\S+, store unreachable: 1 key\\(s\\) loaded$"_s);
    QVERIFY2(asOf.match(keys->infoLabel()->text()).hasMatch(), qPrintable(keys->infoLabel()->text()));
    const QString header = keys->detail()->headerText();
    QVERIFY2(header.contains(u"store unreachable"_s) && !relative(header), qPrintable(header));
    QVERIFY2(!relative(expires.data().toString()), qPrintable(expires.data().toString()));
    QVERIFY(!keys->stateView()->isEnabled());  // the counts are as old
    QVERIFY(keys->stateView()->toolTip().contains(u"store unreachable"_s));
    // Export waits for fresh data, and Ctrl+P says so.
    QVERIFY(!exportCase->isEnabled());
    QSignalSpy exported(keys->detail()->explainView(), &ExplainView::exported);
    QTest::keyClick(window.searchBox(), Qt::Key_P, Qt::ControlModifier);
    QTRY_VERIFY2(window.messages()->text().contains(u"waits for fresh data"_s), qPrintable(window.messages()->text()));
    QVERIFY(window.messages()->label()->isVisible() && !window.messages()->label()->visibleRegion().isEmpty());
    QCOMPARE(exported.count(), 0);
    QVERIFY(QDir(folder).isEmpty());

    // Back: read again, live again, exportable again.
    cluster.cluster().start();
    QTRY_COMPARE_WITH_TIMEOUT(window.browseSession()->state(), DbSession::State::Connected, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(relative(keys->detail()->headerText()), 30000);
    QVERIFY(!keys->detail()->headerText().contains(u"unreachable"_s));
    QTRY_COMPARE_WITH_TIMEOUT(keys->infoLabel()->text(), u"1 key(s) loaded"_s, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(exportCase->isEnabled(), 10000);
    QVERIFY(keys->stateView()->isEnabled());
  }
};

QTEST_MAIN(TestStoreLoss)
#include "tst_storeloss.moc"
