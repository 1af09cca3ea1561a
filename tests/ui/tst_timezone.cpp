// The agent's time zone (issue 19, item 2): every time shown to people — the detail's tables,
// the Explain tab (core's narrative), the support and customer documents — follows the
// "Times in" setting (UTC or local); changing it shows the same key again without a trip to
// the store, and a new window on the same settings comes back in the zone chosen. The process
// runs in New York (TZ set before Qt starts) so local and UTC differ.
#include <QAction>
#include <QFile>
#include <QApplication>
#include <QSettings>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTimeZone>
#include <QtTest>
#include <ctime>

#include "core/text/humantime.h"
#include "tests/ui/uifixtures.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/explain/explainview.h"
#include "ui/keydata/generationmodel.h"
#include "ui/keys/csvexport.h"
#include "ui/keys/keysworkspace.h"
#include "ui/mainwindow/mainwindow.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

namespace {

const char* const kZone = "America/New_York";

QString tableForm(const QDateTime& t) { return t.toString(u"yyyy-MM-dd HH:mm:ss"_s) % u" "_s % t.timeZoneAbbreviation(); }

}  // namespace

class TestTimeZone : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;

  void openIncident(MainWindow& window) {
    window.show();
    window.connection()->connectProfile(ConnectionProfile::fromConninfo(QString::fromStdString(m_db->conninfo())));
    QTRY_COMPARE_WITH_TIMEOUT(window.browseSession()->state(), DbSession::State::Connected, 15000);
    QSignalSpy loaded(window.keys()->detail(), &KeyDetailWidget::detailLoaded);
    window.keys()->search(QString::fromLatin1(test::kIncidentKey));
    QVERIFY(loaded.wait(10000));
    QCOMPARE(window.keys()->detail()->detail().generations().size(), std::size_t(2));
  }

  static QString explainText(MainWindow& window) {
    auto* browser = window.keys()->detail()->explainView()->findChild<QTextBrowser*>();
    return browser ? browser->toPlainText() : QString();
  }

  /// What the window shows for generation 1's creation: the Generations table's cell, the
  /// Explain tab's text, and both documents.
  struct Shown {
    QString cell, explain, supportHtml, customerMarkdown;
  };
  static Shown shown(MainWindow& window) {
    KeyDetailWidget* detail = window.keys()->detail();
    GenerationModel* generations = detail->generationModel();
    int row = 0;
    while (row < generations->rowCount() &&
           generations->data(generations->index(row, GenerationModel::ColGeneration)).toInt() != 1)
      ++row;
    return {generations->data(generations->index(row, GenerationModel::ColCreated)).toString(), explainText(window),
            detail->explainView()->report().html,
            detail->explainView()->report(explain::Audience::Customer).markdown};
  }

  /// Generation 1's creation in the table's form and in core's (the narrative's), in UTC and
  /// in New York — computed here, apart from the code under test.
  struct Expected {
    QString utcCell, localCell, utcWords, localWords;
  };
  static Expected expected(MainWindow& window) {
    const auto& generations = window.keys()->detail()->detail().generations();
    const auto first = std::find_if(generations.begin(), generations.end(), [](const auto& g) { return g.number == 1; });
    const std::int64_t micros = first->createdAt.micros;
    const QDateTime utc = QDateTime::fromMSecsSinceEpoch(micros / 1000, Qt::UTC);
    const auto newYork = text::TimeZone::parse(kZone);
    return {tableForm(utc), tableForm(utc.toTimeZone(QTimeZone(kZone))),
            QString::fromStdString(text::humanTime(micros, text::TimeZone::utc())),
            QString::fromStdString(text::humanTime(micros, *newYork))};
  }

  static QAction* timesIn(MainWindow& window, const QString& which) {
    return window.findChild<QAction*>(which);
  }

 private slots:
  void initTestCase() {
    QCOMPARE(QDateTime::currentDateTime().timeZone().id(), QByteArray(kZone));  // main() set TZ
    m_db = std::make_unique<test::TestDatabase>("ui_timezone");
    test::seedConsoleRows(*m_db);
  }

  void everyTimeFollowsTheSettingAndItSurvivesANewWindow() {
    QTemporaryDir dir;
    QSettings utcSettings(dir.filePath(u"utc.ini"_s), QSettings::IniFormat);
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    {
      MainWindow window(settings);
      openIncident(window);
      const Expected want = expected(window);
      QVERIFY(want.localCell != want.utcCell);

      // First run: UTC everywhere a person reads a time.
      Shown now = shown(window);
      QCOMPARE(now.cell, want.utcCell);
      QVERIFY2(now.explain.contains(want.utcWords), qPrintable(now.explain));
      QVERIFY2(now.supportHtml.contains(want.utcWords) && now.supportHtml.contains(want.utcCell),
               qPrintable(now.supportHtml.left(3000)));
      QVERIFY2(now.customerMarkdown.contains(u" UTC"_s), qPrintable(now.customerMarkdown));

      // Local time: the same key shown again in New York's time, nothing read from the store.
      QAction* local = timesIn(window, u"timesInLocal"_s);
      QVERIFY(local);
      QVERIFY2(local->text().contains(QLatin1String(kZone)), qPrintable(local->text()));
      QSignalSpy loaded(window.keys()->detail(), &KeyDetailWidget::detailLoaded);
      local->trigger();
      now = shown(window);
      QCOMPARE(now.cell, want.localCell);
      QVERIFY2(now.explain.contains(want.localWords) && !now.explain.contains(want.utcWords), qPrintable(now.explain));
      QVERIFY2(now.supportHtml.contains(want.localWords) && now.supportHtml.contains(want.localCell) &&
                   !now.supportHtml.contains(want.utcWords),
               qPrintable(now.supportHtml.left(3000)));
      QVERIFY2(!now.customerMarkdown.contains(u" UTC"_s) && (now.customerMarkdown.contains(u" EST"_s) ||
                                                             now.customerMarkdown.contains(u" EDT"_s)),
               qPrintable(now.customerMarkdown));
      QCOMPARE(loaded.size(), 0);
      QCOMPARE(settings.value(u"display/timeZone"_s).toString(), u"local"_s);

      // What machines read stays ISO-8601 UTC: the CSV export.
      auto conn = m_db->connect();
      KeyFilter filter;
      filter.key = QString::fromLatin1(test::kIncidentKey);
      ExportProgress progress;
      const QString csvPath = dir.filePath(u"keys.csv"_s);
      QVERIFY(exportKeysCsv(conn, filter, csvPath, progress) >= 1);
      QFile csv(csvPath);
      QVERIFY(csv.open(QIODevice::ReadOnly));
      const QString rows = QString::fromUtf8(csv.readAll());
      const explain::Generation* live = window.keys()->detail()->detail().live();
      QVERIFY(live);
      // To the second: the CSV's milliseconds are the database's rounding.
      const QString isoCreated = toDateTime(live->createdAt).toString(u"yyyy-MM-ddTHH:mm:ss"_s);
      QVERIFY2(rows.contains(isoCreated) && rows.contains(u"Z,"_s) && !rows.contains(u"EST"_s) &&
                   !rows.contains(u"EDT"_s),
               qPrintable(rows));

      // And back.
      QAction* utc = timesIn(window, u"timesInUtc"_s);
      QVERIFY(utc);
      utc->trigger();
      QCOMPARE(shown(window).cell, want.utcCell);
      QVERIFY(shown(window).explain.contains(want.utcWords));
      local->trigger();
      window.close();
    }
    // A window on other settings (UTC) in between: the zone is read from the settings, not
    // left over in the process.
    {
      MainWindow other(utcSettings);
      QVERIFY(timesIn(other, u"timesInUtc"_s)->isChecked());
    }
    MainWindow again(settings);
    QVERIFY(timesIn(again, u"timesInLocal"_s)->isChecked());
    openIncident(again);
    const Expected want = expected(again);
    const Shown now = shown(again);
    QCOMPARE(now.cell, want.localCell);
    QVERIFY2(now.explain.contains(want.localWords), qPrintable(now.explain));
  }

  void cleanupTestCase() { m_db.reset(); }
};

int main(int argc, char** argv) {
  // Before Qt or the C library reads the zone.
  qputenv("TZ", kZone);
  tzset();
  QApplication app(argc, argv);
  TestTimeZone test;
  return QTest::qExec(&test, argc, argv);
}

#include "tst_timezone.moc"
