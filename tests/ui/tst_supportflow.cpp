// The support case in three actions (issue 19): Ctrl+K, paste a pay_… id, Enter lands on the
// key — on the Explain tab when it executed more than once, on the generation the id belongs
// to — and one more action writes the PDF into the case folder, named after the whole key.
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QLineEdit>
#include <QMenu>
#include <QSettings>
#include <QTabWidget>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/ui/consolewindow.h"
#include "tests/ui/uifixtures.h"
#include "ui/cases/casesview.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/detail/responseview.h"
#include "ui/explain/explainview.h"
#include "ui/keys/keylistmodel.h"
#include "ui/keys/keysworkspace.h"
#include "ui/mainwindow/mainwindow.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

class TestSupportFlow : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;

  /// Connects window to the seeded store and waits for the key table.
  void connect(MainWindow& window) {
    window.connection()->connectProfile(ConnectionProfile::fromConninfo(QString::fromStdString(m_db->conninfo())));
    QTRY_COMPARE_WITH_TIMEOUT(window.browseSession()->state(), DbSession::State::Connected, 15000);
  }

  /// The three actions' first part as a user does it: Ctrl+K, Ctrl+V, Enter.
  static void pasteAndEnter(MainWindow& window, const QString& text) { test::pasteAndEnter(window, text); }

  static QString shownResponseGeneration(MainWindow& window) {
    auto* response = window.keys()->detail()->findChild<ResponseView*>();
    auto* combo = response ? response->findChild<QComboBox*>() : nullptr;
    return combo ? combo->currentText() : QString();
  }

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ui_supportflow");
    test::seedConsoleRows(*m_db);
  }

  // Defect: generation 1's resource id showed generation 2's response.
  void searchByAnEarlierGenerationsIdShowsThatGeneration() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    MainWindow window(settings);
    window.show();
    connect(window);
    QSignalSpy loaded(window.keys()->detail(), &KeyDetailWidget::detailLoaded);
    pasteAndEnter(window, u"pay_1NvQ8A"_s);  // generation 1 of the incident
    QVERIFY(loaded.wait(10000));
    QCOMPARE(shownResponseGeneration(window), u"1 (archived)"_s);
    // Generation 2's id shows generation 2.
    pasteAndEnter(window, u"pay_2Kx7Rt"_s);
    QVERIFY(loaded.wait(10000));
    QCOMPARE(shownResponseGeneration(window), u"2 (live)"_s);
  }

  // Ctrl+K, paste, Enter: the duplicate's explanation is in view; Ctrl+P: the customer's PDF is
  // in the case folder, named after the resource id pasted and the whole key, with none of the
  // store's internals in its words. No dialog opens.
  void threeActionsFromPastedIdToPdfInTheCaseFolder() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    const QString folder = dir.filePath(u"cases/ticket folder"_s);  // made on first export
    settings.setValue(u"cases/folder"_s, folder);
    MainWindow window(settings);
    window.show();
    connect(window);
    QSignalSpy loaded(window.keys()->detail(), &KeyDetailWidget::detailLoaded);
    pasteAndEnter(window, u"pay_1NvQ8A"_s);
    QVERIFY(loaded.wait(10000));
    QCOMPARE(window.keys()->detail()->detail().executions(), 2);
    QCOMPARE(window.keys()->detail()->tabs()->currentIndex(), int(KeyDetailWidget::ExplainTab));

    // Support's document carries core's resolution: what to refund, and what would have prevented it.
    const QString supportHtml = window.keys()->detail()->explainView()->report().html;
    QVERIFY2(supportHtml.contains(u"<h2>Resolution</h2>"_s) && supportHtml.contains(u"Refund "_s),
             qPrintable(supportHtml.left(3000)));
    QVERIFY(supportHtml.contains(u"<h2>Prevention</h2>"_s));
    QSignalSpy exported(window.keys()->detail()->explainView(), &ExplainView::exported);
    // The agent's case is open (its ticket goes in the letter): Ctrl+P asks nothing.
    QVERIFY(window.cases()->newCase(u"ZD-3001"_s) > 0);
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_P, Qt::ControlModifier);  // the search box still has focus
    QVERIFY(exported.wait(20000));
    const QString expected =
        QDir(folder).filePath(u"idem-pay_1NvQ8A-"_s + QString::fromLatin1(test::kIncidentKey) + u"-customer.pdf"_s);
    QCOMPARE(exported.first().first().toString(), expected);
    QFile pdf(expected);
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QCOMPARE(pdf.read(5), QByteArray("%PDF-"));
    QVERIFY(QApplication::activeModalWidget() == nullptr);
    // What the customer reads: the charge ids they know, not the key, generations or leases.
    QProcess text;
    text.start(u"pdftotext"_s, {expected, u"-"_s});
    QVERIFY(text.waitForFinished(30000));
    const QString words = QString::fromUtf8(text.readAllStandardOutput());
    QVERIFY2(words.contains(u"pay_"_s), qPrintable(words));
    static const QRegularExpression internal(
        uR"(\b(keys?|generations?|leases?|idempotency|idempotent|ttl|tier|policy|fingerprint|trace)\b|req_|acct_)"_s,
        QRegularExpression::CaseInsensitiveOption);
    const QRegularExpressionMatch leak = internal.match(words);
    QVERIFY2(!leak.hasMatch(), qPrintable(u"internal term \"%1\" in the customer's PDF:\n%2"_s.arg(leak.captured(0), words)));
    QVERIFY(!words.contains(QString::fromLatin1(test::kIncidentKey)));
    // A second export does not overwrite the first.
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_P, Qt::ControlModifier);  // the search box still has focus
    QVERIFY(exported.wait(20000));
    QVERIFY(exported.last().first().toString().endsWith(QString::fromLatin1(test::kIncidentKey) + u"-customer-2.pdf"_s));
    // The Explain tab's button writes the version it shows: support's, by default.
    auto* toCase = window.keys()->detail()->explainView()->findChild<QPushButton*>(u"exportToCaseFolder"_s);
    QVERIFY(toCase);
    QTest::mouseClick(toCase, Qt::LeftButton);
    QVERIFY(exported.wait(20000));
    QCOMPARE(exported.last().first().toString(),
             QDir(folder).filePath(u"idem-pay_1NvQ8A-"_s + QString::fromLatin1(test::kIncidentKey) + u".pdf"_s));
  }

  // A key that ran once lands on the Response tab as before.
  void aKeyThatRanOnceStaysOnItsResponse() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    MainWindow window(settings);
    window.show();
    connect(window);
    QSignalSpy loaded(window.keys()->detail(), &KeyDetailWidget::detailLoaded);
    window.keys()->detail()->setCurrentTab(KeyDetailWidget::ResponseTab);
    pasteAndEnter(window, u"pay_S0001"_s);
    QVERIFY(loaded.wait(10000));
    QCOMPARE(window.keys()->detail()->detail().executions(), 1);
    QCOMPARE(window.keys()->detail()->tabs()->currentIndex(), int(KeyDetailWidget::ResponseTab));
  }

  void cleanupTestCase() { m_db.reset(); }
};

QTEST_MAIN(TestSupportFlow)
#include "tst_supportflow.moc"
