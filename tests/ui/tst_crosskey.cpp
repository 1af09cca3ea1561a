// Issue 32, item 2 in the console (offscreen, real store): the Keys workspace's "Suspected
// duplicates" filter lists each repeat under a new key with the earlier key, route, tenant, gap
// and what happened, read off the GUI thread; picking one opens the repeating key, whose header
// names the earlier key as a link (with its resource and the gap) that opens it; the trace and
// the explanation name the pair too.
#include <QCheckBox>
#include <QLabel>
#include <QTableView>
#include <QTextBrowser>
#include <QtTest>

#include "tests/store/crosskey_pairs.h"
#include "tests/ui/consolewindow.h"
#include "tests/ui/uifixtures.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/explain/explainview.h"
#include "ui/keys/duplicatelistmodel.h"
#include "ui/keys/duplicatesview.h"
#include "ui/keys/keysworkspace.h"
#include "ui/trace/eventmodel.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;

class TestCrossKey : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;

  static QString cell(const DuplicateListModel* m, int row, int column) {
    return m->data(m->index(row, column)).toString();
  }

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ui_crosskey");
    test::seedConsoleRows(*m_db);  // keys of other kinds, which the list must leave out
    test::CrossKeyPairs pairs(m_db->conninfo());
    pairs.make("k_first", "k_again", trace::Outcome::DuplicateObserved);
    pairs.make("k_paid", "k_held", trace::Outcome::DuplicateHeld);
  }

  void theFilterListsThePairs() {
    test::ConsoleDesk desk;
    QVERIFY(desk.open(m_db->conninfo()));
    KeysWorkspace* keys = desk.window->keys();
    DuplicatesView* view = keys->duplicatesView();
    DuplicateListModel* model = view->model();
    QVERIFY(!view->isVisible());
    auto* box = keys->findChild<QCheckBox*>(u"suspectedDuplicatesFilter"_s);
    QVERIFY(box);
    box->setChecked(true);  // as the agent ticks it; the panel debounces, then the list loads
    QTRY_VERIFY(view->isVisible());
    QVERIFY(!keys->table()->isVisible());
    QTRY_VERIFY_WITH_TIMEOUT(model->loaded() && !model->isLoading(), 10000);
    QCOMPARE(model->rowCount(), 2);
    // Newest first: the held repeat was made last.
    QCOMPARE(cell(model, 0, DuplicateListModel::ColKey), u"k_held"_s);
    QCOMPARE(cell(model, 0, DuplicateListModel::ColEarlierKey), u"k_paid"_s);
    QCOMPARE(cell(model, 0, DuplicateListModel::ColWhat), u"held (409), ran once"_s);
    QCOMPARE(cell(model, 0, DuplicateListModel::ColResources), u"pay_k_paid"_s);
    QCOMPARE(cell(model, 1, DuplicateListModel::ColKey), u"k_again"_s);
    QCOMPARE(cell(model, 1, DuplicateListModel::ColEarlierKey), u"k_first"_s);
    QCOMPARE(cell(model, 1, DuplicateListModel::ColRoute), u"POST /v1/payments"_s);
    QCOMPARE(cell(model, 1, DuplicateListModel::ColTenant), u"acct_9"_s);
    QCOMPARE(cell(model, 1, DuplicateListModel::ColGap), u"40 s later"_s);
    QCOMPARE(cell(model, 1, DuplicateListModel::ColWhat), u"both ran (flagged)"_s);
    QCOMPARE(cell(model, 1, DuplicateListModel::ColResources), u"pay_k_first → pay_k_again"_s);
    QVERIFY2(keys->infoLabel()->text().contains(u"2 suspected duplicates"_s), qPrintable(keys->infoLabel()->text()));

    // The filters narrow it: a key matches either key of a pair.
    KeyFilter f;
    f.suspectedDuplicates = true;
    f.key = u"k_first"_s;
    keys->setFilter(f);
    QVERIFY(model->isLoading());  // asked of the worker; the GUI thread goes on
    QTRY_VERIFY(!model->isLoading());
    QCOMPARE(model->rowCount(), 1);
    QCOMPARE(cell(model, 0, DuplicateListModel::ColKey), u"k_again"_s);

    // Unticked, the key list is back.
    box->setChecked(false);
    QTRY_VERIFY(keys->table()->isVisible());
    QVERIFY(!view->isVisible());
  }

  // The list's query waits on a lock the test holds: the GUI thread keeps running meanwhile.
  void theListLoadsOffTheGuiThread() {
    test::ConsoleDesk desk;
    QVERIFY(desk.open(m_db->conninfo()));
    DuplicateListModel* model = desk.window->keys()->duplicatesView()->model();
    auto blocker = m_db->connect();
    blocker.exec("BEGIN");
    blocker.exec("LOCK TABLE idem.events IN ACCESS EXCLUSIVE MODE");
    KeyFilter f;
    f.suspectedDuplicates = true;
    desk.window->keys()->setFilter(f);
    QCOMPARE(test::ticksWhileHeld(20), 20);
    QVERIFY(model->isLoading());
    QCOMPARE(model->rowCount(), 0);
    blocker.exec("ROLLBACK");
    QTRY_VERIFY_WITH_TIMEOUT(!model->isLoading() && model->rowCount() == 2, 10000);
  }

  void aPairOpensBothKeys() {
    test::ConsoleDesk desk;
    QVERIFY(desk.open(m_db->conninfo()));
    KeysWorkspace* keys = desk.window->keys();
    KeyFilter f;
    f.suspectedDuplicates = true;
    keys->setFilter(f);
    DuplicatesView* view = keys->duplicatesView();
    QTRY_VERIFY_WITH_TIMEOUT(view->model()->rowCount() == 2 && !view->model()->isLoading(), 10000);

    // Picking the observed pair opens the repeat; its header names the earlier execution.
    view->table()->selectRow(1);
    KeyDetailWidget* detail = keys->detail();
    QTRY_COMPARE(detail->detail().ref.key, u"k_again"_s);
    const QString header = detail->headerText();
    QVERIFY2(header.contains(u"repeats <a href='key:k_first'>k_first</a> (pay_k_first, 40 s earlier): both ran"_s),
             qPrintable(header));
    // The trace row names the earlier key; the explanation tells the pair and the refund.
    bool traced = false;
    for (int row = 0; row < detail->eventModel()->rowCount(); ++row)
      traced = traced || detail->eventModel()
                             ->data(detail->eventModel()->index(row, EventModel::ColDetail))
                             .toString()
                             .startsWith(u"repeats key k_first"_s);
    QVERIFY(traced);
    const QString md = detail->explainView()->markdown(explain::Audience::Internal);
    QVERIFY2(md.contains(u"### Duplicates across keys"_s), qPrintable(md));
    QVERIFY2(md.contains(u"Refund pay\\_k\\_again"_s), qPrintable(md));
    // The Explain tab's page (the document its HTML and PDF exports print) too.
    auto* page = detail->explainView()->findChild<QTextBrowser*>();
    QVERIFY(page);
    QTRY_VERIFY2(page->toPlainText().contains(u"Duplicates across keys"_s) &&
                     page->toPlainText().contains(u"k_again repeats k_first"_s),
                 qPrintable(page->toPlainText()));

    // The header's link opens the earlier key, which names the later one.
    auto* label = detail->findChild<QLabel*>(u"keyHeader"_s);
    QVERIFY(label);
    emit label->linkActivated(u"key:k_first"_s);
    QTRY_COMPARE(detail->detail().ref.key, u"k_first"_s);
    QVERIFY2(detail->headerText().contains(u"repeated by <a href='key:k_again'>k_again</a> (pay_k_again, 40 s later)"_s),
             qPrintable(detail->headerText()));

    // Picking the held pair opens a key that stored no generation, only its trace row.
    view->table()->selectRow(0);
    QTRY_COMPARE(detail->detail().ref.key, u"k_held"_s);
    QVERIFY2(detail->headerText().contains(u"repeats <a href='key:k_paid'>k_paid</a> (pay_k_paid, 40 s earlier): the "
                                           "repeat was held (409)"_s) &&
                 detail->headerText().contains(u"no generation stored, only its trace"_s),
             qPrintable(detail->headerText()));

    // A double-click on a pair's earlier key opens that key.
    const QModelIndex earlier = view->model()->index(0, DuplicateListModel::ColEarlierKey);
    view->table()->scrollTo(earlier);
    const QRect rect = view->table()->visualRect(earlier);
    QTest::mouseClick(view->table()->viewport(), Qt::LeftButton, {}, rect.center());
    QTest::mouseDClick(view->table()->viewport(), Qt::LeftButton, {}, rect.center());
    QTRY_COMPARE(detail->detail().ref.key, u"k_paid"_s);
    QVERIFY2(detail->headerText().contains(u"the repeat was held (409)"_s), qPrintable(detail->headerText()));
  }
};

QTEST_MAIN(TestCrossKey)
#include "tst_crosskey.moc"
