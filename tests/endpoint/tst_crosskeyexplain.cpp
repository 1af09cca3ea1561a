// Issue 32, item 2 end to end: the same payment under two keys inside the window through the
// endpoint `idemctl serve` runs, on a tier with "cross_key": {"mode": "observe"} — both execute
// (the ledger holds two charges), and explain, read from what the enforcer wrote, names the
// earlier charge on the later key, proposes refunding the later one, and the earlier key names
// the later one.
#include <QtTest>

#include "core/explain/explain.h"
#include "core/explain/loader.h"
#include "tests/endpoint/endpoint_support.h"

using namespace idem;

namespace {

// (Ordinary literals: moc stops reading a file at a multi-line raw string.)
const char* const kObservePolicy =
    "{\"docs_url\": \"https://docs.test/idempotency\", \"tenant_header\": \"Account-Id\","
    " \"tiers\": [{\"name\": \"payments\", \"routes\": [\"POST /v1/payments\"], \"ttl\": \"1h\", \"lease\": \"30s\","
    " \"cross_key\": {\"mode\": \"observe\", \"window\": \"60s\"}}]}";

}  // namespace

class TestCrossKeyExplain : public QObject {
  Q_OBJECT

 private slots:
  void aRepeatUnderANewKeyIsNamedAndResolved() {
    test::LiveServer s("ep_crosskey_explain", kObservePolicy);
    auto first = s.client()->post("/v1/payments", test::jsonHeaders("agent-charge-1"), test::kPayment);
    QCOMPARE(first.status, 201);
    auto again = s.client()->post("/v1/payments", test::jsonHeaders("agent-charge-1-retry"), test::kPayment);
    QCOMPARE(again.status, 201);
    // Observe flags, it does not stop: the service's own ledger holds both charges.
    QCOMPARE(s.ledgerRows("agent-charge-1") + s.ledgerRows("agent-charge-1-retry"), 2LL);
    const std::string firstCharge = test::parse(first)["id"].get<std::string>();
    const std::string secondCharge = test::parse(again)["id"].get<std::string>();

    auto c = s.db.connect();
    QTRY_COMPARE(c.exec("SELECT count(*) AS n FROM idem.events WHERE related_key IS NOT NULL").integer(0, "n"), 1LL);
    const auto x = explain::explain(explain::loadByKey(c, "agent-charge-1-retry"));
    QCOMPARE(x.crossKey.size(), std::size_t{1});
    const auto& f = x.crossKey.front();
    QCOMPARE(f.outcome, trace::Outcome::DuplicateObserved);
    QCOMPARE(f.earlierResource.value_or(""), firstCharge);
    QCOMPARE(f.laterResource.value_or(""), secondCharge);
    QVERIFY2(x.narrative.find("matches " + firstCharge + ", ") != std::string::npos &&
                 x.narrative.find("same body, key agent-charge-1: a client that made a new key for its retry") !=
                     std::string::npos,
             x.narrative.c_str());
    QCOMPARE(x.resolution.action, explain::Resolution::Action::Refund);
    QVERIFY2(x.resolution.proposal.starts_with("Refund " + secondCharge + " (key agent-charge-1-retry"),
             x.resolution.proposal.c_str());
    QCOMPARE(x.resolution.executions.at(0).role, explain::ExecutionRole::SuspectedDuplicate);

    const auto earlier = explain::explain(explain::loadByKey(c, "agent-charge-1"));
    QCOMPARE(earlier.crossKey.size(), std::size_t{1});
    QVERIFY(!earlier.crossKey.front().thisKeyIsLater);
    QVERIFY2(earlier.narrative.find("Key agent-charge-1-retry sent the same request") != std::string::npos,
             earlier.narrative.c_str());
  }
};

QTEST_GUILESS_MAIN(TestCrossKeyExplain)
#include "tst_crosskeyexplain.moc"
