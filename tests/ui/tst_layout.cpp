// Layout at every size (issue 19 item 5): the timeline's tick labels never overlap, at any
// width of the real widget; the window opens at a share of the screen on the first run and
// comes back at the geometry it was closed with.
#include <QSettings>
#include <QTemporaryDir>
#include <QScreen>
#include <QtTest>

#include "tests/ui/uifixtures.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/mainwindow/mainwindow.h"
#include "ui/trace/timelinewidget.h"
#include "ui/trace/traceview.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

class TestLayout : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ui_layout");
    test::seedConsoleRows(*m_db);
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

  void cleanupTestCase() { m_db.reset(); }
};

QTEST_MAIN(TestLayout)
#include "tst_layout.moc"
