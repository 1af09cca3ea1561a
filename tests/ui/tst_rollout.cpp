// The Tiers view's Rollout tab on the offscreen platform (issue 31, item 2): a tier in rollout
// `observe` is driven through the real enforcer over a real store — keyless requests, a retry of
// a completed key, a concurrent request of a held key, a key reused with another body — and the
// tab shows, per route, what enforcement would have answered, lists the requests behind a count
// and opens a key from them. A route in `required` shows no count.
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>

#include "core/store/policystore.h"
#include "tests/support/harness.h"
#include "tests/ui/uifixtures.h"
#include "ui/tiers/observedpanel.h"
#include "ui/tiers/tiersworkspace.h"

using namespace idem;
using namespace idem::ui;
using namespace Qt::StringLiterals;
using tiers::Would;

namespace {

// Not a raw string: moc reads raw strings as ordinary ones and would lose the test class.
const char* const kPolicy =
    "{\"docs_url\": \"https://docs.test/idempotency\", \"tenant_header\": \"Account-Id\", \"tiers\": ["
    "{\"name\": \"charges\", \"routes\": [\"POST /v1/charges\"], \"ttl\": \"1h\", \"rollout\": \"observe\"},"
    "{\"name\": \"orders\", \"routes\": [\"POST /v1/orders\"], \"ttl\": \"1h\"}]}";

const QString kRoute = u"POST /v1/charges"_s;

}  // namespace

class TestRolloutView : public QObject {
  Q_OBJECT
  std::unique_ptr<test::TestDatabase> m_db;
  std::unique_ptr<DbSession> m_session;
  std::unique_ptr<TiersWorkspace> m_view;

  // Each decision the enforcer made and did not enforce, checked as it is made.
  static void observe(test::Harness& h, const enforce::Request& request, const std::string& would) {
    const enforce::Decision d = h.enforcer.begin(request);
    QCOMPARE(d.kind, enforce::Decision::Kind::Bypass);
    QVERIFY(d.observed);
    QCOMPARE(d.outcome, would);
    QCOMPARE(d.route, kRoute.toStdString());
  }

 private slots:
  void initTestCase() {
    m_db = std::make_unique<test::TestDatabase>("ui_rollout");
    {
      auto conn = m_db->connect();
      (void)store::recordPolicy(conn, policy::parsePolicy(kPolicy, "ui-rollout.json"));
    }
    test::Harness h(m_db->conninfo(), kPolicy);
    const std::string body = R"({"amount":1})";
    for (int i = 0; i < 3; ++i) observe(h, test::Harness::post("/v1/charges", "", body), "key_missing");
    QCOMPARE(h.roundTrip(test::Harness::post("/v1/charges", "ch-1", body)).status, 201);
    observe(h, test::Harness::post("/v1/charges", "ch-1", body), "replayed");
    observe(h, test::Harness::post("/v1/charges", "ch-1", R"({"amount":2})"), "mismatch");
    {
      enforce::Decision held = h.enforcer.begin(test::Harness::post("/v1/charges", "ch-2", body));
      QCOMPARE(held.kind, enforce::Decision::Kind::Execute);
      observe(h, test::Harness::post("/v1/charges", "ch-2", body), "conflict");
      (void)h.enforcer.complete(*held.ticket, enforce::Response{201, {}, "{}"});
    }
    // A route in required refuses as ever: nothing observed there.
    QCOMPARE(h.enforcer.begin(test::Harness::post("/v1/orders", "", body)).response.status, 400);
    QVERIFY(h.trace.flush());

    m_session = std::make_unique<DbSession>(u"test-rollout"_s);
    QVERIFY(test::openSession(*m_session, m_db->conninfo()));
    m_view = std::make_unique<TiersWorkspace>(m_session.get());
    m_view->resize(1360, 900);
    m_view->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_view.get()));
    QTRY_VERIFY_WITH_TIMEOUT(m_view->observedLoaded(), 30000);
  }

  void cleanupTestCase() {
    m_view.reset();
    m_session.reset();
  }

  void countsShowPerRoute() {
    ObservedPanel* panel = m_view->observed();
    QCOMPARE(panel->routes()->rowCount(), 1);  // orders is enforced: not listed
    QCOMPARE(panel->countShown(kRoute, Would::Refuse), 3LL);
    QCOMPARE(panel->countShown(kRoute, Would::Replay), 1LL);
    QCOMPARE(panel->countShown(kRoute, Would::Conflict), 1LL);
    QCOMPARE(panel->countShown(kRoute, Would::Reject), 1LL);
    QCOMPARE(panel->countShown(kRoute, Would::Other), 0LL);
    QCOMPARE(panel->countShown(u"POST /v1/orders"_s, Would::Refuse), -1LL);
    // Brought forward the first time there is something to see, its count in the tab's title.
    QCOMPARE(m_view->bottomTabs()->currentWidget(), static_cast<QWidget*>(panel));
    QCOMPARE(m_view->bottomTabs()->tabText(1), u"Rollout (observe): 6"_s);
    // With the requests behind the largest count (would 400: three keyless requests).
    QTRY_COMPARE_WITH_TIMEOUT(panel->requests()->rowCount(), 3, 10000);
    QCOMPARE(panel->requests()->index(0, 2).data().toString(), u"(no key)"_s);
    if (qEnvironmentVariableIsSet("IDEM_UI_SAVE_GRABS")) m_view->grab().save(u"/tmp/grab-rollout.png"_s);
  }

  void aCountListsItsRequests() {
    ObservedPanel* panel = m_view->observed();
    QStandardItemModel* requests = panel->requests();
    panel->pick(kRoute, Would::Refuse);
    QTRY_COMPARE_WITH_TIMEOUT(requests->rowCount(), 3, 10000);
    for (int row = 0; row < 3; ++row) {
      QCOMPARE(requests->index(row, 2).data().toString(), u"(no key)"_s);
      QCOMPARE(requests->index(row, 3).data().toString(), u"400"_s);  // what enforcement would have sent
      QCOMPARE(requests->index(row, 1).data().toString(), u"acct_1"_s);
    }
    panel->pick(kRoute, Would::Conflict);
    QTRY_COMPARE_WITH_TIMEOUT(requests->index(0, 2).data().toString(), u"ch-2"_s, 10000);
    QCOMPARE(requests->rowCount(), 1);
    QCOMPARE(requests->index(0, 3).data().toString(), u"409"_s);
  }

  void aRequestOpensItsKey() {
    ObservedPanel* panel = m_view->observed();
    panel->pick(kRoute, Would::Replay);
    QTRY_COMPARE_WITH_TIMEOUT(panel->requests()->index(0, 2).data().toString(), u"ch-1"_s, 10000);
    QSignalSpy opened(m_view.get(), &TiersWorkspace::keyRequested);
    auto* view = panel->findChild<QTableView*>(u"observedRequests"_s);
    QVERIFY(view);
    const QRect cellRect = view->visualRect(panel->requests()->index(0, 2));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, cellRect.center());
    QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, cellRect.center());
    QCOMPARE(opened.count(), 1);
    QCOMPARE(opened.at(0).at(0).toString(), u"ch-1"_s);
  }
};

QTEST_MAIN(TestRolloutView)
#include "tst_rollout.moc"
