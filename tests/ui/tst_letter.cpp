// The customer's letter (issue 29 item 4), read back as its reader reads it: the PDF's text
// (pdftotext) and the HTML carry the amount of each charge (read from the stored response at the
// policy's path), the sender and the signature, the letter's date, the case's ticket and the
// refund timing, under a readable title; the wording follows the reader the settings name (a
// platform's merchant or a consumer). Ctrl+P asks for a ticket only when no case is open.
// IDEM_UI_SAVE_EXPORTS=DIR keeps the files to look at.
#include <QClipboard>
#include <QDateTime>
#include <QDir>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QRegularExpression>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/ui/uifixtures.h"
#include "ui/cases/casebook.h"
#include "ui/cases/casesview.h"
#include "ui/connection/connectioncontroller.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/explain/explainview.h"
#include "ui/explain/lettersettings.h"
#include "ui/keys/keysworkspace.h"
#include "ui/mainwindow/mainwindow.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

namespace {

QString pdfText(const QString& path) {
  QProcess p;
  p.start(u"pdftotext"_s, {path, u"-"_s});
  if (!p.waitForFinished(30000) || p.exitCode() != 0) return u"<pdftotext failed>"_s;
  // pdftotext breaks long lines where the page does: compare words, not line breaks.
  return QString::fromUtf8(p.readAllStandardOutput()).simplified();
}

QString fileText(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

// "6 Dec 2026" today in UTC, as core writes a date (the test runs in UTC).
QString today() { return QLocale(QLocale::English).toString(QDateTime::currentDateTimeUtc().date(), u"d MMM yyyy"_s); }

const QString kRefundTiming = u"Refunds reach your card within 5 business days."_s;

// What the store keeps to itself: no key, generation, lease or request id in a customer's letter.
const QRegularExpression kInternal(
    uR"(\b(keys?|generations?|leases?|idempotency|idempotent|ttl|tier|policy|fingerprint|trace)\b|req_|acct_)"_s,
    QRegularExpression::CaseInsensitiveOption);

}  // namespace

class TestLetter : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;
  const KeyRef m_incident{u"acct_42"_s, u"POST /v1/payments"_s, QString::fromLatin1(test::kIncidentKey)};

  void connect(MainWindow& window) {
    window.connection()->connectProfile(ConnectionProfile::fromConninfo(QString::fromStdString(m_db->conninfo())));
    QTRY_COMPARE_WITH_TIMEOUT(window.browseSession()->state(), DbSession::State::Connected, 15000);
  }

  static void openIncident(MainWindow& window, const QString& id = u"pay_1NvQ8A"_s) {
    QSignalSpy loaded(window.keys()->detail(), &KeyDetailWidget::detailLoaded);
    QApplication::clipboard()->setText(id);
    QTest::keyClick(&window, Qt::Key_K, Qt::ControlModifier);
    QTest::keyClick(window.searchBox(), Qt::Key_V, Qt::ControlModifier);
    QTest::keyClick(window.searchBox(), Qt::Key_Return);
    QVERIFY(loaded.wait(10000));
  }

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ui_letter");
    test::seedConsoleRows(*m_db);
  }

  void theLetterCarriesAmountSenderDateTicketAndRefundTiming_data() {
    QTest::addColumn<int>("addressee");
    QTest::addColumn<QString>("greeting");
    QTest::addColumn<QString>("wording");    // a sentence only this reader gets
    QTest::addColumn<QString>("notForThem");  // a sentence only the other reader gets
    QTest::newRow("merchant") << int(explain::Addressee::Merchant) << u"Hello,"_s << u"Your system sent the same request"_s
                              << u"was sent to us again"_s;
    QTest::newRow("consumer") << int(explain::Addressee::Consumer) << u"Dear customer,"_s
                              << u"The same payment was sent to us again"_s << u"Your system"_s;
  }
  void theLetterCarriesAmountSenderDateTicketAndRefundTiming() {
    QFETCH(int, addressee);
    QFETCH(QString, greeting);
    QFETCH(QString, wording);
    QFETCH(QString, notForThem);
    DbSession session(u"test"_s);
    QVERIFY(test::openSession(session, m_db->conninfo()));
    KeyDetailWidget widget(&session);
    widget.resize(1280, 800);
    widget.show();
    QSignalSpy loaded(&widget, &KeyDetailWidget::detailLoaded);
    widget.showKey(m_incident);
    QVERIFY(loaded.wait(10000));
    // The console's key detail names the amount too (the seed's responses: 1000 cents, usd).
    const auto* header = widget.findChild<QLabel*>(u"keyHeader"_s);
    QVERIFY(header);
    QVERIFY2(header->text().contains(u"$10.00 each"_s), qPrintable(header->text()));

    LetterSettings settings = LetterSettings::defaults();
    settings.sender = u"Acme Payments"_s;
    settings.signature = u"Jane Doe\nCustomer support, Acme Payments"_s;
    settings.refundTiming = kRefundTiming;
    settings.addressee = static_cast<explain::Addressee>(addressee);
    widget.explainView()->setLetterSource([settings] { return settings.options(u"SUP-4411"_s); });

    QTemporaryDir dir;
    const QString keep = qEnvironmentVariable("IDEM_UI_SAVE_EXPORTS");
    const QString base = (keep.isEmpty() ? dir.path() : keep) % u"/letter-"_s % QString::fromLatin1(QTest::currentDataTag());
    QString error;
    using Format = ExplainView::Format;
    QVERIFY2(widget.explainView()->exportTo(base + u".pdf"_s, Format::Pdf, &error, ExplainView::Audience::Customer),
             qPrintable(error));
    QVERIFY2(widget.explainView()->exportTo(base + u".html"_s, Format::Html, &error, ExplainView::Audience::Customer),
             qPrintable(error));
    const QString date = today();
    for (const QString& text : {pdfText(base + u".pdf"_s), fileText(base + u".html"_s)}) {
      const QString plain = QString(text).replace(u"&#x27;"_s, u"'"_s);
      for (const QString& wanted :
           {u"Your payment of $10.00 on "_s, u": charged twice"_s, u"Acme Payments"_s, u"Jane Doe"_s,
            u"Customer support, Acme Payments"_s, u"Ticket SUP-4411"_s, date, kRefundTiming, greeting, wording,
            u"We will refund pay_2Kx7Rt ($10.00)."_s, u"pay_1NvQ8A"_s})
        QVERIFY2(plain.contains(wanted), qPrintable(u"missing \"%1\" in:\n%2"_s.arg(wanted, plain.left(4000))));
      QVERIFY2(!plain.contains(notForThem), qPrintable(plain.left(4000)));
    }
    const QString words = pdfText(base + u".pdf"_s);
    const QRegularExpressionMatch leak = kInternal.match(words);
    QVERIFY2(!leak.hasMatch(), qPrintable(u"internal term \"%1\" in the letter:\n%2"_s.arg(leak.captured(0), words)));
    // The title is words, not two ids in a monospace font.
    QVERIFY(!fileText(base + u".html"_s).contains(u"<code>"_s));
  }

  // With a case open, Ctrl+P writes its letter without a dialog and quotes its ticket; with none,
  // a prompt asks for the ticket (and opens the case), then writes it.
  void ctrlPQuotesTheCaseTicketAndAsksOnlyWithoutOne() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    settings.setValue(u"cases/folder"_s, dir.filePath(u"cases"_s));
    LetterSettings letter = LetterSettings::defaults();
    letter.sender = u"Globex Shop"_s;
    letter.addressee = explain::Addressee::Consumer;
    letter.save(settings);
    MainWindow window(settings);
    window.show();
    connect(window);
    openIncident(window);
    QSignalSpy exported(window.keys()->detail()->explainView(), &ExplainView::exported);

    // No case open: the prompt, not the export.
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_P, Qt::ControlModifier);
    QInputDialog* prompt = nullptr;
    QTRY_VERIFY((prompt = window.findChild<QInputDialog*>(u"ticketPrompt"_s)) != nullptr && prompt->isVisible());
    QCOMPARE(exported.size(), 0);
    prompt->setTextValue(u"ZD-1001"_s);
    prompt->accept();
    QVERIFY(exported.wait(20000));
    QCOMPARE(window.caseBook()->currentTicket(), u"ZD-1001"_s);
    QString text = pdfText(exported.last().first().toString());
    QVERIFY2(text.contains(u"Ticket ZD-1001"_s) && text.contains(u"Globex Shop"_s) && text.contains(u"Dear customer,"_s),
             qPrintable(text));

    // The case is open now: the next Ctrl+P asks nothing.
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_P, Qt::ControlModifier);
    QVERIFY(exported.wait(20000));
    QCOMPARE(exported.size(), 2);
    QVERIFY(window.findChild<QInputDialog*>(u"ticketPrompt"_s) == nullptr || !window.findChild<QInputDialog*>(u"ticketPrompt"_s)->isVisible());
    // Another case, another ticket in the letter.
    QVERIFY(window.cases()->newCase(u"ZD-2002"_s) > 0);
    QTest::keyClick(&window, Qt::Key_P, Qt::ControlModifier);
    QVERIFY(exported.wait(20000));
    text = pdfText(exported.last().first().toString());
    QVERIFY2(text.contains(u"Ticket ZD-2002"_s) && !text.contains(u"ZD-1001"_s), qPrintable(text));
    QVERIFY(QApplication::activeModalWidget() == nullptr);
  }

  // A queue of tickets: customer A's case is still open when the agent pastes customer B's id.
  // B's letter quoted A's ticket and B's key joined A's case, without a question. Now Ctrl+P
  // asks (filled with A's ticket, so keeping it is one Enter), the answer opens B's case, and an
  // empty answer gives a letter without a reference, never A's.
  void theNextCustomersLetterNeverQuotesTheLastTicket() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    settings.setValue(u"cases/folder"_s, dir.filePath(u"cases"_s));
    settings.setValue(u"cases/database"_s, dir.filePath(u"cases.sqlite"_s));
    MainWindow window(settings);
    window.show();
    connect(window);
    QSignalSpy exported(window.keys()->detail()->explainView(), &ExplainView::exported);
    auto shownPrompt = [&window] {
      QInputDialog* prompt = nullptr;
      const bool shown = QTest::qWaitFor(
          [&] { return (prompt = window.findChild<QInputDialog*>(u"ticketPrompt"_s)) && prompt->isVisible(); }, 10000);
      return shown ? prompt : nullptr;
    };
    // Customer A: no case open, the prompt opens ZD-3001 for A's key.
    QVERIFY(window.cases()->newCase(u"ZD-3001"_s) > 0);
    openIncident(window);
    QTest::keyClick(&window, Qt::Key_P, Qt::ControlModifier);
    QVERIFY(exported.wait(20000));
    QVERIFY2(pdfText(exported.last().first().toString()).contains(u"Ticket ZD-3001"_s), "A's letter");

    // Customer B, ZD-3002, with A's case still open.
    openIncident(window, u"pay_S0001"_s);
    QCOMPARE(window.keys()->detail()->detail().ref.tenant, u"acct_1"_s);
    const auto before = exported.size();
    QTest::keyClick(&window, Qt::Key_P, Qt::ControlModifier);
    QInputDialog* prompt = shownPrompt();
    QVERIFY(prompt);
    QCOMPARE(exported.size(), before);  // nothing written before the agent answers
    QCOMPARE(prompt->textValue(), u"ZD-3001"_s);
    QVERIFY2(prompt->labelText().contains(u"ZD-3001"_s), qPrintable(prompt->labelText()));
    prompt->setTextValue(u"ZD-3002"_s);
    prompt->accept();
    QVERIFY(exported.wait(20000));
    QString text = pdfText(exported.last().first().toString());
    QVERIFY2(text.contains(u"Ticket ZD-3002"_s) && !text.contains(u"ZD-3001"_s), qPrintable(text));
    QCOMPARE(window.caseBook()->currentTicket(), u"ZD-3002"_s);
    // A's case holds A's key only.
    const auto cases = window.caseBook()->findCases(u"ZD-3001"_s);
    QCOMPARE(cases.size(), std::size_t{1});
    QCOMPARE(cases.front().keys.size(), std::size_t{1});
    QCOMPARE(cases.front().keys.front().key, QString::fromLatin1(test::kIncidentKey));

    // Back to A with B's case open, and an empty answer: a letter with no ticket at all.
    openIncident(window);
    QTest::keyClick(&window, Qt::Key_P, Qt::ControlModifier);
    prompt = shownPrompt();
    QVERIFY(prompt);
    prompt->setTextValue({});
    prompt->accept();
    QVERIFY(exported.wait(20000));
    text = pdfText(exported.last().first().toString());
    QVERIFY2(!text.contains(u"Ticket"_s), qPrintable(text));
  }

  // Typed settings: what the dialog saves reads back the same; a hand-edited INI's unquoted
  // commas and an unknown addressee read as meant (the defaults fill what is absent).
  void settingsReadBackAsWritten() {
    QTemporaryDir dir;
    const QString ini = dir.filePath(u"s.ini"_s);
    LetterSettings written = LetterSettings::defaults();
    written.sender = u"Acme, Inc."_s;
    written.signature = u"Jane Doe\nSupport, Acme"_s;
    written.addressee = explain::Addressee::Consumer;
    {
      QSettings settings(ini, QSettings::IniFormat);
      written.save(settings);
    }
    QSettings settings(ini, QSettings::IniFormat);
    const LetterSettings read = LetterSettings::load(settings);
    QCOMPARE(read.sender, written.sender);
    QCOMPARE(read.signature, written.signature);
    QCOMPARE(read.refundTiming, written.refundTiming);
    QCOMPARE(read.addressee, explain::Addressee::Consumer);
    QFile hand(dir.filePath(u"hand.ini"_s));
    QVERIFY(hand.open(QIODevice::WriteOnly));
    hand.write("[letter]\nsender=Globex, Ltd\naddressee=someone\n");
    hand.close();
    QSettings edited(hand.fileName(), QSettings::IniFormat);
    const LetterSettings fromHand = LetterSettings::load(edited);
    QCOMPARE(fromHand.sender, u"Globex, Ltd"_s);
    QCOMPARE(fromHand.addressee, explain::Addressee::Merchant);
    QCOMPARE(fromHand.refundTiming, LetterSettings::defaults().refundTiming);
  }

  void cleanupTestCase() { m_db.reset(); }
};

QTEST_MAIN(TestLetter)
#include "tst_letter.moc"
