// The demo's incident as `./run demo` seeds it — real HTTP to the endpoint, the ledger written
// by the service, the key backdated so that the late retry ran 33 minutes after expiry — and
// what explain proposes for it: the second ledger row is the duplicate, refund it; the policy
// change is the payments TTL against this client's retry horizon. The customer's version names
// both charges and no internal term. The seed's stuck key (a worker that died) asks to verify.
#include <QtTest>

#include <regex>

#include "core/demo/seed.h"
#include "core/explain/explain.h"
#include "core/explain/format.h"
#include "core/explain/loader.h"
#include "core/policy/policy.h"
#include "resources/embedded_resources.h"
#include "tests/endpoint/endpoint_support.h"

using namespace idem;

class TestResolutionDemo : public QObject {
  Q_OBJECT

 private slots:
  void theSeedsIncidentIsResolved() {
    // The seed edits keys behind the endpoint's back: no replays from memory (seedHistory says so).
    test::LiveServer s("ep_resolution_demo", std::string(*resources::find("policy/demo-policy.json")), true, false);
    const demo::SeedReport seeded = demo::seedHistory(*s.server, s.db.conninfo());
    QCOMPARE(seeded.incidentKey, std::string("checkout-8812-pay"));

    auto c = s.db.connect();
    // The charges as the service's ledger holds them, by generation.
    auto ledger = c.exec(
        "SELECT id, generation FROM idem_demo.ledger WHERE tenant = $1 AND idem_key = $2 ORDER BY generation",
        {seeded.incidentTenant, seeded.incidentKey});
    QCOMPARE(ledger.rows(), 2);
    const std::string first = ledger.str(0, "id"), second = ledger.str(1, "id");
    QVERIFY2(first.starts_with("pay_") && second.starts_with("pay_"), (first + " " + second).c_str());
    // Backdating moved the first charge's "created" (what the ledger API shows) with its key:
    // the charge, its ledger row and the key's first generation agree on when it happened.
    auto times = c.exec(
        "SELECT (l.payload ->> 'created')::bigint AS created, extract(epoch FROM l.created_at)::bigint AS recorded,"
        " extract(epoch FROM a.created_at)::bigint AS key_created FROM idem_demo.ledger l"
        " JOIN idem.key_archive a ON a.tenant = l.tenant AND a.endpoint = l.endpoint AND a.idem_key = l.idem_key"
        "  AND a.generation = l.generation WHERE l.id = $1",
        {first});
    QCOMPARE(times.rows(), 1);
    QVERIFY2(std::llabs(times.integer(0, "created") - times.integer(0, "recorded")) <= 2 &&
                 std::llabs(times.integer(0, "created") - times.integer(0, "key_created")) <= 2,
             (std::to_string(times.integer(0, "created")) + " vs ledger " + std::to_string(times.integer(0, "recorded")) +
              " vs key " + std::to_string(times.integer(0, "key_created")))
                 .c_str());

    const auto x = explain::explain(
        explain::loadByKey(c, seeded.incidentKey, explain::Scope{seeded.incidentTenant, "POST /v1/payments"}));
    const auto& r = x.resolution;
    QCOMPARE(x.executions, 2);
    QCOMPARE(r.executions.size(), std::size_t{2});
    QCOMPARE(r.executions[0].resource.value_or(""), first);
    QCOMPARE(r.executions[0].role, explain::ExecutionRole::Intended);
    QCOMPARE(r.executions[1].resource.value_or(""), second);
    QCOMPARE(r.executions[1].role, explain::ExecutionRole::Duplicate);
    QCOMPARE(r.executions[1].outcome, std::string("executed_after_expiry"));
    // Backdated by 24 h 33 min just before the late retry: it ran 33 min after expiry (and a
    // few hundred milliseconds of seeding, truncated away).
    QVERIFY2(r.executions[1].afterExpiry && *r.executions[1].afterExpiry >= std::chrono::minutes(33) &&
                 *r.executions[1].afterExpiry < std::chrono::minutes(34),
             r.executions[1].reason.c_str());
    QCOMPARE(r.action, explain::Resolution::Action::Refund);
    QVERIFY2(r.proposal.starts_with("Refund " + second + " of $2,499.00 (generation 2, charged ") &&
                 r.proposal.find(" UTC, 33 min after the key expired). Keep " + first + " of $2,499.00 (generation 1") !=
                     std::string::npos,
             r.proposal.c_str());
    // The TTL (24 h) against the horizon the trace shows: the original, replays at +30 s and
    // +2 min 30 s, and the retry at +24 h 33 min.
    QVERIFY(r.prevention);
    QCOMPARE(r.prevention->setting, std::string("ttl"));
    QCOMPARE(r.prevention->tier, std::string("payments"));
    QVERIFY(r.prevention->current);
    QCOMPARE(*r.prevention->current, std::chrono::milliseconds(std::chrono::hours(24)));
    QVERIFY(r.prevention->observed >= std::chrono::hours(24) + std::chrono::minutes(33));
    QCOMPARE(r.prevention->suggested, std::chrono::milliseconds(std::chrono::hours(25)));

    QCOMPARE(x.customer.references, (std::vector<std::string>{first, second}));
    // The amount, from the stored response at the path the demo policy names (the ledger's $2,499.00).
    QCOMPARE(x.customer.action, "We will refund " + second + " ($2,499.00).");
    const std::string customer = explain::toText(x, explain::Audience::Customer);
    QVERIFY2(customer.find("replays") == std::string::npos && customer.find(seeded.incidentKey) == std::string::npos &&
                 !std::regex_search(customer, std::regex(R"(\b(key|generation|lease|TTL)\b)", std::regex::icase)),
             customer.c_str());
    QVERIFY2(customer.find("twice more") != std::string::npos, customer.c_str());  // the two replays

    // The stuck payment: its worker died before storing anything, nobody retried.
    const auto stuck = explain::explain(
        explain::loadByKey(c, seeded.stuckKey, explain::Scope{"acct_acme", "POST /v1/payments"}));
    QCOMPARE(stuck.resolution.executions.size(), std::size_t{1});
    QCOMPARE(stuck.resolution.executions[0].outcome, std::string("in_doubt"));
    QCOMPARE(stuck.resolution.executions[0].role, explain::ExecutionRole::OutcomeUnknown);
    QCOMPARE(stuck.resolution.action, explain::Resolution::Action::Verify);
    QVERIFY2(stuck.resolution.proposal.starts_with("Check with the service whether request req_worker_died_0c41"),
             stuck.resolution.proposal.c_str());
  }
};

QTEST_GUILESS_MAIN(TestResolutionDemo)
#include "tst_resolution_demo.moc"
