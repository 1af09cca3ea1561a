// Explain's resolution and its two audiences against a real store: the seed's incident
// (executed again after expiry: the second charge is the duplicate, refund it, the TTL against
// the client's retry horizon), a lease takeover where both executions ran (duplicate) and one
// where the late owner's work was rolled back with its completion (no duplicate), a key
// executed once (nothing to resolve), and `idemctl explain --audience customer` as a process,
// whose words must hold no internal term.
#include <QtTest>

#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/explain/explain.h"
#include "core/explain/format.h"
#include "core/explain/loader.h"
#include "tests/store/explain_incident.h"
#include "tests/support/harness.h"
#include "tests/support/testdb.h"

using namespace idem;
using nlohmann::json;

namespace {

// The seed's incident (explain_incident.h), and a key that ran once.
void craftIncident(pg::Connection& c) {
  const std::string version = test::craftIncident(c);
  // A key that ran once and was replayed: nothing to resolve.
  c.exec(
      "INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint, state,"
      "   resp_status, resource_ref, request_id, created_at, completed_at, expires_at)"
      " VALUES ('acct_42', 'POST /v1/payments', 'k_once', 1, 'payments', $1::integer, '\\x01'::bytea, 'done',"
      "   201, 'pay_777', 'req_7', '2026-03-05T09:00:00Z', '2026-03-05T09:00:00.050Z', '2026-03-06T09:00:00Z')",
      {version});
  c.exec(
      "INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, status, request_id, detail)"
      " VALUES ('2026-03-05T09:00:00.050Z', 'acct_42', 'POST /v1/payments', 'k_once', 1, 'payments', 'executed', 201,"
      "         'req_7', 'pay_777'),"
      "        ('2026-03-05T09:00:30Z', 'acct_42', 'POST /v1/payments', 'k_once', 1, 'payments', 'replayed', 201,"
      "         'req_8', NULL)");
}

// Words a customer must not read: the store's internals and this key's identifiers.
std::string internalTerm(const std::string& text) {
  static const std::regex internal(
      R"(\b(keys?|generations?|leases?|idempotency|idempotent|ttl|tier|policy|sweeper|archived?|fingerprint|)"
      R"(replayed|executions?|executed|trace)\b|req_|k_incident|k-takeover|acct_42|acct_1|/v1/)",
      std::regex::icase);
  std::smatch m;
  return std::regex_search(text, m, internal) ? m.str() : std::string();
}

void noInternalTerms(const std::string& text) {
  const std::string term = internalTerm(text);
  QVERIFY2(term.empty(), ("internal term \"" + term + "\" in: " + text).c_str());
}

const explain::Execution& execution(const explain::Explanation& x, std::size_t i) {
  return x.resolution.executions.at(i);
}

}  // namespace

class TestResolution : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { m_db = std::make_unique<test::TestDatabase>("explain_resolution"); }

  void theIncidentsSecondChargeIsTheDuplicate() {
    auto c = m_db->connect();
    craftIncident(c);
    const auto x = explain::explain(explain::loadByKey(c, "k_incident"));
    const auto& r = x.resolution;
    QCOMPARE(r.executions.size(), std::size_t{2});
    QCOMPARE(execution(x, 0).resource.value_or(""), std::string("pay_123"));
    QCOMPARE(execution(x, 0).role, explain::ExecutionRole::Intended);
    QCOMPARE(execution(x, 1).resource.value_or(""), std::string("pay_456"));
    QCOMPARE(execution(x, 1).role, explain::ExecutionRole::Duplicate);
    QCOMPARE(execution(x, 1).generation, 2);
    QCOMPARE(execution(x, 1).afterExpiry->count(), 32LL * 60 * 1000000);
    QCOMPARE(r.action, explain::Resolution::Action::Refund);
    QCOMPARE(r.duplicates, 1);
    QCOMPARE(r.proposal, std::string("Refund pay_456 (generation 2, charged 3 Mar 2026, 10:32 UTC, 32 min after the "
                                     "key expired). Keep pay_123 (generation 1, charged 2 Mar 2026, 10:00 UTC)."));
    // The policy change: the TTL against the retry horizon the trace shows (first request
    // 10:00:00, the retry that ran again at 10:32:00.095 the next day).
    QVERIFY(r.prevention);
    QCOMPARE(r.prevention->setting, std::string("ttl"));
    QCOMPARE(r.prevention->tier, std::string("payments"));
    QVERIFY(r.prevention->current);
    QCOMPARE(r.prevention->current->count(), 24LL * 3600 * 1000);
    QCOMPARE(r.prevention->observed.count(), (24LL * 3600 + 32 * 60) * 1000000 + 95000);
    QCOMPARE(r.prevention->suggested.count(), 25LL * 3600 * 1000);
    QVERIFY2(r.prevention->text.find("(24 h) is shorter than this client's observed retry horizon (24 h 32 min") !=
                 std::string::npos,
             r.prevention->text.c_str());
    QVERIFY2(r.prevention->text.find("\"ttl\": \"25h\"") != std::string::npos, r.prevention->text.c_str());

    // JSON: the fields, times in ISO-8601, the words in the chosen zone.
    const auto paris = explain::explain(explain::loadByKey(c, "k_incident"),
                                        explain::ExplainOptions{*text::TimeZone::parse("Europe/Paris")});
    const json j = explain::toJson(paris);
    QCOMPARE(j["time_zone"].get<std::string>(), std::string("Europe/Paris"));
    const json& jr = j["resolution"];
    QCOMPARE(jr["action"].get<std::string>(), std::string("refund"));
    QCOMPARE(jr["duplicates"].get<int>(), 1);
    QCOMPARE(jr["executions"][1]["resource"].get<std::string>(), std::string("pay_456"));
    QCOMPARE(jr["executions"][1]["role"].get<std::string>(), std::string("duplicate"));
    QCOMPARE(jr["executions"][1]["at"].get<std::string>(), std::string("2026-03-03T10:32:00.095Z"));
    QCOMPARE(jr["executions"][1]["after_expiry_ms"].get<long long>(), 32LL * 60 * 1000);
    QCOMPARE(jr["executions"][0]["role"].get<std::string>(), std::string("intended"));
    QCOMPARE(jr["prevention"]["suggested_ms"].get<long long>(), 25LL * 3600 * 1000);
    QCOMPARE(jr["prevention"]["current_ms"].get<long long>(), 24LL * 3600 * 1000);
    QVERIFY2(jr["proposal"].get<std::string>().find("charged 3 Mar 2026, 11:32 CET") != std::string::npos,
             jr.dump().c_str());
    // Text and Markdown carry it too.
    const std::string text = explain::toText(x);
    QVERIFY2(text.find("Resolution:\n  Refund pay_456") != std::string::npos, text.c_str());
    QVERIFY2(text.find("Prevention:") != std::string::npos, text.c_str());
    QVERIFY2(text.find("3 Mar 2026, 10:32 UTC  generation 2  pay_456  DUPLICATE") != std::string::npos, text.c_str());
    const std::string md = explain::toMarkdown(x);
    QVERIFY2(md.find("**Resolution:** Refund pay\\_456") != std::string::npos, md.c_str());
    QVERIFY2(md.find("| 3 Mar 2026, 10:32 UTC | 2 | `pay_456` | **duplicate** |") != std::string::npos, md.c_str());

    // The customer's version: what happened and what will be done, without internals.
    const auto& cu = x.customer;
    QCOMPARE(cu.references, (std::vector<std::string>{"pay_123", "pay_456"}));
    QCOMPARE(cu.summary, std::string("Your request was processed twice: pay_123 on 2 Mar 2026, 10:00 UTC and pay_456 on "
                                     "3 Mar 2026, 10:32 UTC. pay_456 is a duplicate."));
    QCOMPARE(cu.action, std::string("We will refund pay_456."));
    QCOMPARE(cu.timeline.size(), std::size_t{3});
    QVERIFY2(cu.timeline[2].text.find("24 h 32 min after the first one") != std::string::npos,
             cu.timeline[2].text.c_str());
    noInternalTerms(explain::toText(x, explain::Audience::Customer));
    // The check finds them where they belong: in the internal version.
    QVERIFY(!internalTerm(explain::toText(x)).empty());
    noInternalTerms(explain::toMarkdown(x, 1000, explain::Audience::Customer));
    noInternalTerms(explain::toJson(x, explain::Audience::Customer).dump());
  }

  void aKeyExecutedOnceProposesNothing() {
    auto c = m_db->connect();
    const auto x = explain::explain(explain::loadByKey(c, "k_once"));
    QCOMPARE(x.resolution.executions.size(), std::size_t{1});
    QCOMPARE(execution(x, 0).role, explain::ExecutionRole::Intended);
    QCOMPARE(execution(x, 0).resource.value_or(""), std::string("pay_777"));
    QCOMPARE(x.resolution.action, explain::Resolution::Action::None);
    QVERIFY(x.resolution.proposal.empty());
    QVERIFY(!x.resolution.prevention);
    const json j = explain::toJson(x);
    QVERIFY(j["resolution"]["proposal"].is_null());
    QCOMPARE(j["resolution"]["action"].get<std::string>(), std::string("none"));
    QVERIFY(explain::toText(x).find("Resolution:") == std::string::npos);
    QCOMPARE(x.customer.summary,
             std::string("Your request was processed once: pay_777 on 5 Mar 2026, 09:00 UTC. No duplicate was made."));
    QCOMPARE(x.customer.action, std::string("Nothing needs to be done."));
    noInternalTerms(explain::toText(x, explain::Audience::Customer));
  }

  // The owner stalls past its lease, a retry takes the key over and runs, then the owner
  // finishes too: both ran, the store kept the second's response. The one that ran after the
  // takeover is the duplicate; the policy change is the lease against how long the first ran.
  void aLeaseTakeoverWhereBothRanIsADuplicate() {
    // The policy the harness enforces, recorded as a server records its own (its tier's lease).
    m_db->connect().exec(
        "INSERT INTO idem.policies (sha256, document, source, effective_at) VALUES ('harness', $1::jsonb, 'test',"
        " now() - interval '1 hour')",
        {R"({"tiers":[{"name":"lease","routes":["POST /v1/lease"],"ttl":"1h","lease":"1s"}]})"});
    test::Harness h(m_db->conninfo());
    using Kind = enforce::Decision::Kind;
    auto first = h.enforcer.begin(test::Harness::post("/v1/lease", "k-takeover", R"({"a":1})"));
    QVERIFY(first.kind == Kind::Execute);
    h.enforcer.leases().setPaused(true);  // the owner stops renewing, as a stalled process would
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));  // the lease is 1 s
    auto second = h.enforcer.begin(test::Harness::post("/v1/lease", "k-takeover", R"({"a":1})"));
    QVERIFY(second.kind == Kind::Execute);
    QVERIFY(second.ticket->takenOver());
    (void)h.enforcer.complete(*second.ticket, enforce::Response{201, {}, R"({"id":"pay_B"})"},
                              enforce::CompleteOptions{std::string("pay_B"), {}, false});
    (void)h.enforcer.complete(*first.ticket, enforce::Response{201, {}, R"({"id":"pay_A"})"},
                              enforce::CompleteOptions{std::string("pay_A"), {}, false});
    QVERIFY(h.trace.flush());

    auto c = m_db->connect();
    const auto x = explain::explain(explain::loadByKey(c, "k-takeover"));
    QCOMPARE(x.executions, 2);
    QCOMPARE(x.resolution.executions.size(), std::size_t{2});
    const auto& superseded = execution(x, 0);
    QCOMPARE(superseded.outcome, std::string("lease_takeover"));
    QCOMPARE(superseded.role, explain::ExecutionRole::Intended);
    // Its response was never stored, but its lease_lost row names what it created.
    QCOMPARE(superseded.resource.value_or("(none)"), std::string("pay_A"));
    QVERIFY2(superseded.reason.find("its response was not stored") != std::string::npos, superseded.reason.c_str());
    const auto& taker = execution(x, 1);
    QCOMPARE(taker.role, explain::ExecutionRole::Duplicate);
    QCOMPARE(taker.resource.value_or(""), std::string("pay_B"));
    QVERIFY2(taker.reason.find("after taking over an expired lease") != std::string::npos, taker.reason.c_str());
    QCOMPARE(x.resolution.action, explain::Resolution::Action::Refund);
    // Not a payments route: the words are "reverse" and "created".
    QVERIFY2(x.resolution.proposal.starts_with("Reverse pay_B (generation 1, created ") &&
                 x.resolution.proposal.find(", after a lease takeover). Keep pay_A (generation 1, created ") !=
                     std::string::npos,
             x.resolution.proposal.c_str());
    QVERIFY(x.resolution.prevention);
    QCOMPARE(x.resolution.prevention->setting, std::string("lease"));
    QVERIFY(x.resolution.prevention->current);
    QCOMPARE(x.resolution.prevention->current->count(), 1000LL);
    QVERIFY(x.resolution.prevention->observed >= std::chrono::milliseconds(1300));
    QCOMPARE(x.customer.action, std::string("We will reverse pay_B."));
    noInternalTerms(explain::toText(x, explain::Audience::Customer));
  }

  // The same race where the late owner's work commits with its completion (the demo's ledger):
  // its transaction is rolled back when it finds the key taken over, so one charge remains.
  void aLeaseTakeoverWhoseLoserRolledBackIsNotADuplicate() {
    test::Harness h(m_db->conninfo());
    auto c = m_db->connect();
    c.exec("CREATE TABLE IF NOT EXISTS public.charges (id text PRIMARY KEY)");
    auto charge = [](const std::string& id) {
      return enforce::CompleteOptions{id, {store::SideStatement{"INSERT INTO public.charges (id) VALUES ($1)", {id}}},
                                      false};
    };
    auto first = h.enforcer.begin(test::Harness::post("/v1/lease", "k-rolled-back", R"({"a":1})"));
    h.enforcer.leases().setPaused(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    auto second = h.enforcer.begin(test::Harness::post("/v1/lease", "k-rolled-back", R"({"a":1})"));
    QVERIFY(second.ticket && second.ticket->takenOver());
    (void)h.enforcer.complete(*second.ticket, enforce::Response{201, {}, "{}"}, charge("pay_kept"));
    (void)h.enforcer.complete(*first.ticket, enforce::Response{201, {}, "{}"}, charge("pay_undone"));
    QVERIFY(h.trace.flush());
    QCOMPARE(c.exec("SELECT count(*) AS n FROM public.charges").integer(0, "n"), 1LL);

    const auto x = explain::explain(explain::loadByKey(c, "k-rolled-back"));
    QCOMPARE(x.resolution.executions.size(), std::size_t{2});
    QCOMPARE(execution(x, 0).role, explain::ExecutionRole::NoEffect);
    QVERIFY2(execution(x, 0).reason.find("rolled back") != std::string::npos, execution(x, 0).reason.c_str());
    QCOMPARE(execution(x, 1).role, explain::ExecutionRole::Intended);
    QCOMPARE(execution(x, 1).resource.value_or(""), std::string("pay_kept"));
    QCOMPARE(x.resolution.action, explain::Resolution::Action::None);
    QCOMPARE(x.resolution.duplicates, 0);
    QCOMPARE(x.customer.action, std::string("Nothing needs to be done."));
  }

  // A proxy's takeover under on_takeover: outcome_unknown (docs/proxy.md, "When the proxy itself
  // dies"): the owner stops, a retry takes the key over and stores "outcome unknown" without running
  // it. One request may have run — the stopped owner's — and nothing ran twice: support is asked to
  // verify it, not to refund a second charge, and the console's "ran more than once" does not list it.
  void aKeyTakenOverAndAnsweredUnknownRanAtMostOnce() {
    test::Harness h(m_db->conninfo());
    auto first = h.enforcer.begin(test::Harness::post("/v1/lease", "k-not-rerun", R"({"a":1})"));
    QVERIFY(first.kind == enforce::Decision::Kind::Execute);
    h.enforcer.leases().setPaused(true);  // the owner stops renewing, as a dead proxy does
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    auto second = h.enforcer.begin(test::Harness::post("/v1/lease", "k-not-rerun", R"({"a":1})"));
    QVERIFY(second.ticket && second.ticket->takenOver());
    enforce::CompleteOptions unknown;
    unknown.outcomeUnknown = true;
    unknown.notRunAfterTakeover = true;
    (void)h.enforcer.complete(*second.ticket, enforce::Response{502, {}, "{}"}, unknown);
    QVERIFY(h.trace.flush());

    auto c = m_db->connect();
    const auto x = explain::explain(explain::loadByKey(c, "k-not-rerun"));
    QCOMPARE(x.executions, 1);
    QCOMPARE(x.resolution.executions.size(), std::size_t{1});
    QCOMPARE(execution(x, 0).outcome, std::string("lease_takeover"));
    QCOMPARE(execution(x, 0).role, explain::ExecutionRole::OutcomeUnknown);
    QCOMPARE(x.resolution.duplicates, 0);
    QCOMPARE(x.resolution.possibleDuplicates, 0);
    QCOMPARE(x.resolution.action, explain::Resolution::Action::Verify);
    QVERIFY2(x.narrative.find("did not run it again: it stored that the outcome is unknown") != std::string::npos &&
                 x.narrative.find("executed it again") == std::string::npos,
             x.narrative.c_str());
    QVERIFY(x.cause.empty());  // nothing ran twice: no cause of a duplicate to name
    noInternalTerms(explain::toText(x, explain::Audience::Customer));
  }

  // Without a database: the roles the store's own scenarios above do not reach.
  void anotherPayloadAfterExpiryIsASeparateRequestAndAnUnknownOutcomeAsksToVerify() {
    auto instant = [](const char* iso) { return *explain::parseIsoUtc(iso); };
    explain::KeyHistory h;
    h.scope = explain::Scope{"acct_9", "POST /v1/orders"};
    h.key = "k_reused";
    h.observedAt = instant("2026-06-03T00:00:00Z");
    explain::Generation g1;
    g1.number = 1;
    g1.state = "done";
    g1.status = 201;
    g1.resourceRef = "ord_1";
    g1.fingerprintHex = "01";
    g1.createdAt = instant("2026-06-01T10:00:00Z");
    g1.expiresAt = instant("2026-06-01T11:00:00Z");
    explain::Generation g2 = g1;
    g2.number = 2;
    g2.live = true;
    g2.resourceRef = "ord_2";
    g2.fingerprintHex = "02";  // another payload
    g2.createdAt = instant("2026-06-02T10:00:00Z");
    g2.expiresAt = instant("2026-06-02T11:00:00Z");
    h.generations = {g1, g2};
    auto x = explain::explain(h);
    QCOMPARE(x.resolution.executions.size(), std::size_t{2});
    QCOMPARE(execution(x, 1).role, explain::ExecutionRole::SeparateRequest);
    QCOMPARE(x.resolution.action, explain::Resolution::Action::None);
    QVERIFY(x.resolution.proposal.empty());
    QVERIFY2(x.customer.summary.find("None of them is a duplicate") != std::string::npos, x.customer.summary.c_str());

    // The same payload, but the first execution's outcome is unknown (the service behind the
    // proxy never answered): the second may be a duplicate, check before reversing anything.
    h.generations[1].fingerprintHex = "01";
    h.generations[0].status = 504;
    h.generations[0].resourceRef.reset();
    explain::Event unknown;
    unknown.at = instant("2026-06-01T10:00:30Z");
    unknown.generation = 1;
    unknown.outcome = "outcome_unknown";
    unknown.status = 504;
    unknown.requestId = "req_u";
    h.events = {unknown};
    x = explain::explain(h);
    QCOMPARE(execution(x, 0).role, explain::ExecutionRole::OutcomeUnknown);
    QCOMPARE(execution(x, 1).role, explain::ExecutionRole::PossibleDuplicate);
    QCOMPARE(x.resolution.action, explain::Resolution::Action::Verify);
    QVERIFY2(x.resolution.proposal.starts_with("Check whether the execution started 1 Jun 2026, 10:00 UTC (request "
                                               "req_u) took effect: if it did, reverse ord_2 (generation 2, created "),
             x.resolution.proposal.c_str());
    QVERIFY2(x.customer.action.starts_with("We are checking whether the interrupted attempt took effect"),
             x.customer.action.c_str());
    noInternalTerms(explain::toText(x, explain::Audience::Customer));
  }

  // A customer-facing explanation from the CLI, in each format, in a named zone.
  void cliCustomerAudienceInEveryFormat() {
    std::string out;
    const std::vector<std::string> base{"explain", "--db", m_db->conninfo(), "--key", "k_incident", "--audience",
                                        "customer", "--tz", "Europe/Paris"};
    auto with = [&](const char* format) {
      auto args = base;
      args.insert(args.end(), {"--format", format});
      return args;
    };
    QCOMPARE(test::runIdemctl(with("json"), &out), 0);
    const json j = json::parse(out, nullptr, false);
    QVERIFY2(j.is_object(), out.c_str());
    QCOMPARE(j["audience"].get<std::string>(), std::string("customer"));
    QCOMPARE(j["references"], json({"pay_123", "pay_456"}));
    QCOMPARE(j["action"].get<std::string>(), std::string("We will refund pay_456."));
    QCOMPARE(j["timeline"][0]["at"].get<std::string>(), std::string("2026-03-02T10:00:00.120Z"));
    QVERIFY2(j["summary"].get<std::string>().find("pay_456 on 3 Mar 2026, 11:32 CET") != std::string::npos, out.c_str());
    noInternalTerms(out);

    QCOMPARE(test::runIdemctl(with("text"), &out), 0);
    QVERIFY2(out.find("What we will do:\n  We will refund pay_456.") != std::string::npos, out.c_str());
    QVERIFY2(out.find("2 Mar 2026, 11:00 CET") != std::string::npos, out.c_str());
    noInternalTerms(out);

    QCOMPARE(test::runIdemctl(with("markdown"), &out), 0);
    QVERIFY2(out.starts_with("## About your request `pay_123`, `pay_456`"), out.c_str());
    QVERIFY2(out.find("### What we will do") != std::string::npos, out.c_str());
    noInternalTerms(out);

    // The internal audience by default, the zone in its words; bad values are refused.
    QCOMPARE(test::runIdemctl({"explain", "--db", m_db->conninfo(), "--key", "k_incident", "--tz", "Asia/Kolkata"},
                              &out),
             0);
    QVERIFY2(out.find("Refund pay_456 (generation 2, charged 3 Mar 2026, 16:02 IST") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"explain", "--db", m_db->conninfo(), "--key", "k_incident", "--tz", "Mars/Olympus"},
                              &out),
             2);
    QVERIFY2(out.find("--tz: \"Mars/Olympus\" is not a time zone") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"explain", "--db", m_db->conninfo(), "--key", "k_incident", "--audience", "public"},
                              &out),
             2);
    QVERIFY2(out.find("--audience") != std::string::npos, out.c_str());
  }

 private:
  std::unique_ptr<test::TestDatabase> m_db;
};

QTEST_GUILESS_MAIN(TestResolution)
#include "tst_resolution.moc"
