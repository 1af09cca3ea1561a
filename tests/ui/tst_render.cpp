// Every view renders something on the offscreen platform: the main window with the key
// table, each detail tab on the incident key, the timeline, the connection dialog, the
// failure banner. "Something" = the grabbed image has many distinct colours.
#include <QClipboard>
#include <QDialog>
#include <QLineEdit>
#include <QSettings>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>
#include <set>

#include "tests/ui/uifixtures.h"
#include "ui/connection/connectiondialog.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/connection/statuswidget.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/keys/keylistmodel.h"
#include "ui/keys/keysworkspace.h"
#include "ui/keys/statecountmodel.h"
#include "ui/mainwindow/mainwindow.h"
#include "ui/trace/traceview.h"
#include "ui/trace/timelinewidget.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

namespace {

int distinctColours(const QImage& image) {
  std::set<QRgb> colours;
  for (int y = 0; y < image.height(); y += 2)
    for (int x = 0; x < image.width(); x += 2) colours.insert(image.pixel(x, y));
  return static_cast<int>(colours.size());
}

void verifyRendered(QWidget* w, const char* what, int minColours = 8) {
  const QImage image = w->grab().toImage();
  QVERIFY2(!image.isNull() && image.width() > 50 && image.height() > 50, what);
  const int n = distinctColours(image);
  QVERIFY2(n >= minColours, qPrintable(u"%1 rendered only %2 colours"_s.arg(QLatin1String(what)).arg(n)));
  if (qEnvironmentVariableIsSet("IDEM_UI_SAVE_GRABS")) image.save(u"/tmp/grab-%1.png"_s.arg(QLatin1String(what)));
}

}  // namespace

class TestRender : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ui_render");
    test::seedConsoleRows(*m_db);
  }

  void mainWindowAndEveryTabRender() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    MainWindow window(settings);
    window.resize(1400, 900);
    window.show();
    window.connection()->connectProfile(ConnectionProfile::fromConninfo(QString::fromStdString(m_db->conninfo())));
    QTRY_COMPARE_WITH_TIMEOUT(window.browseSession()->state(), DbSession::State::Connected, 15000);
    QTRY_VERIFY_WITH_TIMEOUT(window.keys()->keyModel()->rowCount() > 10, 10000);
    QTRY_VERIFY(window.keys()->stateModel()->loaded());
    verifyRendered(&window, "main-window", 20);
    verifyRendered(window.keys()->table(), "key-table", 8);

    // Ctrl+K focuses the search; Enter on a pay_ id lands on the incident key.
    QTest::keyClick(&window, Qt::Key_K, Qt::ControlModifier);
    QTRY_VERIFY(window.searchBox()->hasFocus());
    QTest::keyClicks(window.searchBox(), u"pay_1NvQ8A"_s);
    QSignalSpy loaded(window.keys()->detail(), &KeyDetailWidget::detailLoaded);
    QTest::keyClick(window.searchBox(), Qt::Key_Return);
    QVERIFY(loaded.wait(10000));
    QCOMPARE(window.keys()->detail()->key().key, QString::fromLatin1(test::kIncidentKey));
    QCOMPARE(window.keys()->detail()->detail().executions(), 2);
    QTRY_COMPARE_WITH_TIMEOUT(window.keys()->keyModel()->rowCount(), 1, 10000);
    QTRY_COMPARE(window.keys()->table()->currentIndex().row(), 0);

    const char* names[] = {"tab-response", "tab-generations", "tab-trace", "tab-explain"};
    for (int tab = 0; tab < 4; ++tab) {
      window.keys()->detail()->setCurrentTab(static_cast<KeyDetailWidget::Tab>(tab));
      QApplication::processEvents();
      verifyRendered(window.keys()->detail()->tabs()->currentWidget(), names[tab], 6);
    }
    verifyRendered(window.keys()->detail()->traceView()->timeline(), "timeline", 12);

    // Standard copy on the table copies the key.
    window.keys()->table()->setFocus();
    QTest::keyClick(window.keys()->table(), Qt::Key_C, Qt::ControlModifier);
    QCOMPARE(QApplication::clipboard()->text(), QString::fromLatin1(test::kIncidentKey));
  }

  void connectionDialogRenders() {
    ConnectionProfile p;
    p.name = u"prod-replica"_s;
    p.host = u"10.0.3.7"_s;
    p.database = u"idem"_s;
    p.user = u"support_ro"_s;
    ConnectionDialog dialog({p}, p.name);
    dialog.show();
    verifyRendered(&dialog, "connection-dialog", 8);
    QCOMPARE(dialog.chosen().name, p.name);
  }

  void failureBannerRenders() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    MainWindow window(settings);
    window.resize(1000, 600);
    window.show();
    window.connection()->connectProfile(ConnectionProfile::fromConninfo(u"host=/nonexistent-dir port=1 dbname=x"_s));
    QTRY_VERIFY_WITH_TIMEOUT(window.banner()->isVisible(), 15000);
    verifyRendered(window.banner(), "banner", 6);
    QVERIFY(window.banner()->messageText().contains(u"cannot be reached"_s));
  }

  void cleanupTestCase() { m_db.reset(); }
};

QTEST_MAIN(TestRender)
#include "tst_render.moc"
