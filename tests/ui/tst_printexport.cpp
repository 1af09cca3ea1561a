// Exports laid out for the page (issue 19 item 4), read back as a person reads them: the PDF's
// text (pdftotext -layout) has every time and id of the tables whole on one line, the timeline's
// whole legend, no stray bullet; the timeline is vectors (pdfimages lists no bitmap; the HTML
// holds an inline SVG, no <img>). IDEM_UI_SAVE_EXPORTS=DIR keeps the files to look at.
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/ui/uifixtures.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/explain/explainview.h"
#include "ui/keydata/generationmodel.h"
#include "ui/trace/eventmodel.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

namespace {

QString run(const QString& program, const QStringList& args) {
  QProcess p;
  p.start(program, args);
  if (!p.waitForFinished(30000) || p.exitCode() != 0) return u"<failed: %1>"_s.arg(program);
  return QString::fromUtf8(p.readAllStandardOutput());
}

}  // namespace

class TestPrintExport : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;
  const KeyRef m_incident{u"acct_42"_s, u"POST /v1/payments"_s, QString::fromLatin1(test::kIncidentKey)};

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ui_printexport");
    test::seedConsoleRows(*m_db);
  }

  void exportsAreLaidOutForThePage_data() {
    QTest::addColumn<QSize>("window");
    QTest::newRow("default size") << QSize(1280, 800);
    QTest::newRow("small window") << QSize(760, 520);
  }
  void exportsAreLaidOutForThePage() {
    QFETCH(QSize, window);
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    KeyDetailWidget widget(&session);
    widget.resize(window);
    widget.show();
    QSignalSpy loaded(&widget, &KeyDetailWidget::detailLoaded);
    widget.showKey(m_incident);
    QVERIFY(loaded.wait(10000));
    widget.setCurrentTab(KeyDetailWidget::ExplainTab);
    QApplication::processEvents();

    QTemporaryDir dir;
    const QString keep = qEnvironmentVariable("IDEM_UI_SAVE_EXPORTS");
    const QString base = (keep.isEmpty() ? dir.path() : keep) % u"/export-"_s % QString::number(window.width());
    QString error;
    QVERIFY2(widget.explainView()->exportTo(base + u".pdf"_s, ExplainView::Format::Pdf, &error), qPrintable(error));
    QVERIFY2(widget.explainView()->exportTo(base + u".html"_s, ExplainView::Format::Html, &error), qPrintable(error));

    const QString text = run(u"pdftotext"_s, {u"-layout"_s, base + u".pdf"_s, u"-"_s});
    // Every value of the tables is whole on one line.
    QStringList values;
    for (int row = 0; row < widget.generationModel()->rowCount(); ++row)
      for (int col : {GenerationModel::ColResource, GenerationModel::ColCreated})
        values << widget.generationModel()->data(widget.generationModel()->index(row, col)).toString();
    for (int row = 0; row < widget.eventModel()->rowCount(); ++row)
      for (int col : {EventModel::ColAt, EventModel::ColRequest})
        values << widget.eventModel()->data(widget.eventModel()->index(row, col)).toString();
    for (const QString& v : values) QVERIFY2(text.contains(v), qPrintable(u"not whole in the PDF: "_s + v + u"\n"_s + text));
    // No line that is only a bullet.
    for (const QString& line : text.split(u'\n')) QVERIFY2(line.trimmed() != u"•"_s, qPrintable(text));
    // Vectors, not a picture of the screen.
    const QString images = run(u"pdfimages"_s, {u"-list"_s, base + u".pdf"_s});
    QVERIFY2(!images.startsWith(u"<failed"_s) && images.trimmed().split(u'\n').size() <= 2, qPrintable(images));

    QFile html(base + u".html"_s);
    QVERIFY(html.open(QIODevice::ReadOnly));
    const QString page = QString::fromUtf8(html.readAll());
    QVERIFY(page.contains(u"<svg"_s));
    QVERIFY(!page.contains(u"<img"_s));
    // The timeline's whole legend (the PDF draws this same SVG).
    QVERIFY(page.contains(u"validity window"_s));
    QVERIFY(page.contains(u"executed after expiry"_s));
    QVERIFY(page.contains(u"white-space: nowrap"_s));
  }

  void cleanupTestCase() { m_db.reset(); }
};

QTEST_MAIN(TestPrintExport)
#include "tst_printexport.moc"
