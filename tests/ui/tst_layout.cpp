// Layout at every size (issue 19 item 5): the timeline's tick labels never overlap, at any
// width of the real widget; the window opens at a share of the screen on the first run and
// comes back at the geometry it was closed with, every splitter where it was left.
#include <QSet>
#include <QSettings>
#include <QSplitter>
#include <QTableView>
#include <QTemporaryDir>
#include <QScreen>
#include <QtTest>

#include "core/policy/policy.h"
#include "core/store/policystore.h"
#include "tests/ui/uifixtures.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/keys/keylistmodel.h"
#include "ui/keys/keysworkspace.h"
#include "ui/mainwindow/mainwindow.h"
#include "ui/trace/timelinewidget.h"
#include "ui/trace/traceview.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

namespace {
QString toText(const QList<int>& sizes) {
  QStringList parts;
  for (int size : sizes) parts << QString::number(size);
  return parts.join(u' ');
}
}  // namespace

class TestLayout : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;

  /// The Tiers page shows its splitter once it has read a store: connect and wait for it.
  bool showTiers(MainWindow& window) {
    window.connection()->connectProfile(ConnectionProfile::fromConninfo(QString::fromStdString(m_db->conninfo())));
    window.setWorkspace(MainWindow::TiersPage);
    auto* split = window.findChild<QSplitter*>(u"tiersSplit"_s);
    return split && QTest::qWaitFor([split] { return split->isVisible(); }, 20000);
  }

  /// Every page laid out once, as a user looking around would: a splitter never shown has no
  /// sizes to keep or compare.
  static void lookAround(MainWindow& window) {
    window.setWorkspace(MainWindow::KeysPage);
    for (int tab : {KeyDetailWidget::ResponseTab, KeyDetailWidget::TraceTab, KeyDetailWidget::ExplainTab}) {
      window.keys()->detail()->setCurrentTab(static_cast<KeyDetailWidget::Tab>(tab));
      QCoreApplication::processEvents();
    }
    for (auto page : {MainWindow::TiersPage, MainWindow::SimulatorPage, MainWindow::CasesPage, MainWindow::KeysPage}) {
      window.setWorkspace(page);
      QCoreApplication::processEvents();
    }
  }

  /// Shows window at a fixed size, connected, with every page laid out.
  bool openEveryPage(MainWindow& window) {
    window.resize(1400, 900);
    window.show();
    if (!QTest::qWaitForWindowExposed(&window) || !showTiers(window)) return false;
    // The detail's tabs (and their splitters) are shown while a key is open: pick one in the
    // list (a search would fit the list to its one row, moving the splitter under test).
    KeysWorkspace* keys = window.keys();
    if (!QTest::qWaitFor([keys] { return keys->keyModel()->rowCount() > 0; }, 10000)) return false;
    QSignalSpy loaded(keys->detail(), &KeyDetailWidget::detailLoaded);
    keys->table()->selectRow(0);
    if (!loaded.wait(10000)) return false;
    lookAround(window);
    return true;
  }

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ui_layout");
    test::seedConsoleRows(*m_db);
    // A policy in force, so the Tiers page has something to lay out.
    auto conn = m_db->connect();
    (void)store::recordPolicy(
        conn, policy::parsePolicy(R"({"docs_url": "https://docs.test/idem", "tiers": [{"name": "payments", "routes": ["POST /v1/payments"], "ttl": "24h"}]})",
                                  "ui-layout.json"));
  }

  void tickLabelsNeverOverlap() {
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    KeyDetailWidget widget(&session);
    widget.resize(1200, 700);
    widget.show();
    QSignalSpy loaded(&widget, &KeyDetailWidget::detailLoaded);
    widget.showKey({u"acct_42"_s, u"POST /v1/payments"_s, QString::fromLatin1(test::kIncidentKey)});
    QVERIFY(loaded.wait(10000));
    widget.setCurrentTab(KeyDetailWidget::TraceTab);
    TimelineWidget* timeline = widget.traceView()->timeline();
    for (int width : {1400, 1000, 700, 520, 380, 300}) {
      timeline->setFixedWidth(width);
      timeline->fitAll();
      timeline->repaint();
      const auto& labels = timeline->tickLabelRects();
      QVERIFY2(!labels.empty(), qPrintable(u"no tick at width %1"_s.arg(width)));
      for (std::size_t i = 1; i < labels.size(); ++i)
        QVERIFY2(labels[i - 1].right() + 4 <= labels[i].left(),
                 qPrintable(u"labels %1 and %2 overlap at width %3"_s.arg(i - 1).arg(i).arg(width)));
    }
  }

  void windowOpensAtAShareOfTheScreenAndComesBackAsLeft() {
    QTemporaryDir dir;
    const QString ini = dir.filePath(u"s.ini"_s);
    const QRect area = QGuiApplication::primaryScreen()->availableGeometry();
    {
      QSettings settings(ini, QSettings::IniFormat);
      MainWindow window(settings);
      window.show();
      QVERIFY(window.width() >= area.width() * 3 / 4);
      QVERIFY(window.height() >= area.height() * 3 / 4);
      window.resize(1250, 760);
      QTRY_COMPARE(window.size(), QSize(1250, 760));
      window.close();
    }
    QSettings settings(ini, QSettings::IniFormat);
    MainWindow window(settings);
    window.show();
    QCOMPARE(window.size(), QSize(1250, 760));
  }

  // Every splitter of the window — the key list against the detail, the filters, the tabs' own,
  // the tiers', the simulator's, the cases' — comes back where it was moved to. A splitter
  // without a name of its own is not kept at all, so each must have one.
  void movedSplittersComeBack() {
    QTemporaryDir dir;
    const QString ini = dir.filePath(u"s.ini"_s);
    QMap<QString, QList<int>> moved;
    {
      QSettings settings(ini, QSettings::IniFormat);
      MainWindow window(settings);
      QVERIFY(openEveryPage(window));
      const auto splitters = window.findChildren<QSplitter*>();
      QVERIFY(splitters.size() >= 8);
      QSet<QString> names;
      for (QSplitter* s : splitters) {
        QVERIFY2(!s->objectName().isEmpty(),
                 qPrintable(u"a splitter in %1 has no name: its position is not kept"_s.arg(
                     QString::fromLatin1(s->parentWidget()->metaObject()->className()))));
        QVERIFY2(!names.contains(s->objectName()), qPrintable(u"two splitters named "_s + s->objectName()));
        names.insert(s->objectName());
        // Move the first handle: the first pane gets a fifth of the room, the rest share it.
        QList<int> sizes = s->sizes();
        int total = 0;
        for (int size : sizes) total += size;
        QVERIFY2(total >= 100, qPrintable(s->objectName() + u" was never laid out"_s));
        QList<int> wanted{total / 5};
        for (int i = 1; i < sizes.size(); ++i) wanted << (total - total / 5) / int(sizes.size() - 1);
        s->setSizes(wanted);
      }
      // Moving the outer splitters resized the inner ones: what is kept is where all settled.
      lookAround(window);
      for (QSplitter* s : splitters) moved.insert(s->objectName(), s->sizes());
      window.close();
    }
    QSettings settings(ini, QSettings::IniFormat);
    MainWindow window(settings);
    QVERIFY(openEveryPage(window));
    // The handles where they were left; the last pane takes what is left over, which may be a
    // few pixels more or less (the second window's rows need not be the first's to the pixel).
    for (QSplitter* s : window.findChildren<QSplitter*>()) {
      const QList<int> was = moved.value(s->objectName());
      const QList<int> now = s->sizes();
      QVERIFY2(now.size() == was.size() && now.mid(0, now.size() - 1) == was.mid(0, was.size() - 1) &&
                   std::abs(now.last() - was.last()) <= 12,
               qPrintable(u"%1 came back at %2, was moved to %3"_s.arg(s->objectName(), toText(now), toText(was))));
    }
  }

  void cleanupTestCase() { m_db.reset(); }
};

QTEST_MAIN(TestLayout)
#include "tst_layout.moc"
