// Explain: the pure part (times, scopes, narrative) on hand-made histories, then the seed's
// incident crafted in a real store with explicit timestamps and explained through the library
// and through `idemctl explain`.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "core/explain/explain.h"
#include "core/explain/format.h"
#include "core/explain/loader.h"
#include "tests/store/explain_incident.h"
#include "tests/support/testdb.h"

using namespace idem;
using nlohmann::json;

namespace {

explain::Instant at(const char* iso) {
  auto t = explain::parseIsoUtc(iso);
  if (!t) throw std::runtime_error(std::string("bad test time ") + iso);
  return *t;
}

const std::string kScope = "acct_42 POST /v1/payments";

// The seed's incident: a payment executed, replayed three times, expired, swept, and a late
// retry of the same payload executed again 32 minutes after expiry.
const std::string kExpectedNarrative =
    "First executed at 2 Mar 2026, 10:00 UTC (201, pay_123). "
    "Replayed 3 times within the key's 24 h window (last at 2 Mar 2026, 14:00 UTC). "
    "The key expired at 3 Mar 2026, 10:00 UTC and was archived by the sweeper at 3 Mar 2026, 10:05 UTC. "
    "A retry arrived at 3 Mar 2026, 10:32 UTC, 32 min after expiry, and was executed again as a new request "
    "(generation 2, 201, pay_456) — 2 executions. "
    "Cause: the client's retry horizon outran the key's TTL. "
    "Generation 2 expired at 4 Mar 2026, 10:32 UTC and is stored until the sweeper archives it.";

void craftIncident(pg::Connection& c) {
  test::craftIncident(c);

  // The same key under two tenants (another key, docs/design.md §2), for the ambiguity check.
  const char* shared =
      "INSERT INTO idem.keys (tenant, endpoint, idem_key, tier, fingerprint, state, resp_status, resource_ref,"
      "   created_at, expires_at) VALUES ($1, 'POST /v1/payments', 'k_shared', 'payments', '\\x01'::bytea, 'done', 201,"
      "   $2, '2026-05-01T08:00:00Z', '2026-05-02T08:00:00Z')";
  c.exec(shared, {"acct_1", "pay_s1"});
  c.exec(shared, {"acct_2", "pay_s2"});
}

}  // namespace

class TestExplain : public QObject {
  Q_OBJECT

 private slots:
  // ---- pure part: no database -------------------------------------------------------------
  void isoTimesRoundTrip() {
    QCOMPARE(explain::isoUtc(explain::Instant{0}), std::string("1970-01-01T00:00:00Z"));
    QCOMPARE(explain::isoUtc(at("2026-03-02T10:00:00.120Z")), std::string("2026-03-02T10:00:00.120Z"));
    QCOMPARE(explain::isoUtc(at("2026-12-31T23:59:59.000001Z")), std::string("2026-12-31T23:59:59.000001Z"));
    QCOMPARE(explain::isoUtc(at("1969-12-31T23:59:59.5Z")), std::string("1969-12-31T23:59:59.500Z"));
    QCOMPARE(at("2026-03-03T10:32:00Z").micros - at("2026-03-03T10:00:00Z").micros, 32LL * 60 * 1000000);
    QVERIFY(!explain::parseIsoUtc("2026-02-30T00:00:00Z"));
    QVERIFY(!explain::parseIsoUtc("2026-03-02 10:00:00"));
  }

  void scopesParse() {
    auto s = explain::Scope::parse("acct_42 post /v1/payments");
    QVERIFY(s);
    QCOMPARE(s->tenant, std::string("acct_42"));
    QCOMPARE(s->endpoint, std::string("POST /v1/payments"));
    QCOMPARE(s->text(), kScope);
    auto noTenant = explain::Scope::parse("  POST   /v1/orders ");
    QVERIFY(noTenant);
    QCOMPARE(noTenant->tenant, std::string());
    QCOMPARE(noTenant->text(), std::string("POST /v1/orders"));
    QVERIFY(!explain::Scope::parse("acct_42"));
  }

  void narrativeOfTheIncidentWithoutADatabase() {
    explain::KeyHistory h;
    h.scope = *explain::Scope::parse(kScope);
    h.key = "k_incident";
    h.observedAt = at("2026-12-01T00:00:00Z");
    explain::Generation g1;
    g1.number = 1;
    g1.tier = "payments";
    g1.state = "done";
    g1.fingerprintHex = "aabb";
    g1.status = 201;
    g1.resourceRef = "pay_123";
    g1.createdAt = at("2026-03-02T10:00:00Z");
    g1.expiresAt = at("2026-03-03T10:00:00Z");
    g1.archivedAt = at("2026-03-03T10:05:00Z");
    g1.archivedBy = "sweeper";
    explain::Generation g2 = g1;
    g2.number = 2;
    g2.live = true;
    g2.resourceRef = "pay_456";
    g2.createdAt = at("2026-03-03T10:32:00Z");
    g2.expiresAt = at("2026-03-04T10:32:00Z");
    g2.archivedAt.reset();
    g2.archivedBy.clear();
    h.generations = {g1, g2};
    auto ev = [](const char* t, int gen, const char* outcome) {
      explain::Event e;
      e.at = at(t);
      e.generation = gen;
      e.outcome = outcome;
      e.status = 201;
      return e;
    };
    h.events = {ev("2026-03-02T10:00:00.120Z", 1, "executed"), ev("2026-03-02T10:00:05Z", 1, "replayed"),
                ev("2026-03-02T10:00:35Z", 1, "replayed"), ev("2026-03-02T14:00:00Z", 1, "replayed"),
                ev("2026-03-03T10:32:00.095Z", 2, "executed_after_expiry")};
    auto x = explain::explain(h);
    QCOMPARE(x.executions, 2);
    QCOMPARE(x.generations[0].replays, 3);
    QCOMPARE(x.generations[1].replays, 0);
    QVERIFY(x.generations[1].afterExpiry);
    QCOMPARE(x.narrative, kExpectedNarrative);
    QCOMPARE(x.cause, std::string("the client's retry horizon outran the key's TTL"));

    // While generation 2 is still within its TTL the last sentence says until when.
    h.observedAt = at("2026-03-03T11:00:00Z");
    auto early = explain::explain(h);
    QVERIFY2(early.narrative.ends_with("Generation 2 is honoured until 4 Mar 2026, 10:32 UTC."), early.narrative.c_str());
  }

  void singleExecutionAndExecutionsFromStateWhenTraceIsMissing() {
    explain::KeyHistory h;
    h.scope = *explain::Scope::parse("POST /v1/orders");
    h.key = "k";
    h.observedAt = at("2026-06-01T12:00:00Z");
    explain::Generation g;
    g.number = 1;
    g.live = true;
    g.state = "done";
    g.status = 201;
    g.resourceRef = "ord_1";
    g.createdAt = at("2026-06-01T11:00:00Z");
    g.expiresAt = at("2026-06-01T11:30:00Z");
    h.generations = {g};  // no events at all (a trace lost in a crash)
    auto x = explain::explain(h);
    QCOMPARE(x.executions, 1);  // a done generation ran, trace or not
    QCOMPARE(x.narrative, std::string("First executed at 1 Jun 2026, 11:00 UTC (201, ord_1). The operation ran once. "
                                      "The key expired at 1 Jun 2026, 11:30 UTC and is stored until the sweeper "
                                      "archives it."));
    QVERIFY(x.cause.empty());
  }

  // A proxy's execution whose service never answered (`outcome_unknown`, a stored 502): support
  // must not read "ran once" — it may have run once or not at all.
  void anUnansweredExecutionIsNotCalledOneThatRan() {
    explain::KeyHistory h;
    h.scope = *explain::Scope::parse("POST /v1/charges");
    h.key = "order-1003";
    h.observedAt = at("2026-06-01T11:10:00Z");
    explain::Generation g;
    g.number = 1;
    g.live = true;
    g.state = "done";
    g.status = 502;
    g.createdAt = at("2026-06-01T11:00:00Z");
    g.expiresAt = at("2026-06-02T11:00:00Z");
    h.generations = {g};
    explain::Event unknown;
    unknown.at = at("2026-06-01T11:00:01Z");
    unknown.generation = 1;
    unknown.outcome = "outcome_unknown";
    unknown.status = 502;
    unknown.requestId = "req_u";
    h.events = {unknown};
    auto x = explain::explain(h);
    QCOMPARE(x.narrative, std::string("First sent to the service at 1 Jun 2026, 11:00 UTC (502). The service never "
                                      "answered, so the operation may or may not have run: check with the service. "
                                      "The key is honoured until 2 Jun 2026, 11:00 UTC."));
    QCOMPARE(x.executions, 1);
    QCOMPARE(x.unanswered, 1);
    QVERIFY2(explain::toText(x).find("Executions:  1 (1 with no answer from the service)") != std::string::npos,
             explain::toText(x).c_str());
  }

  void leaseTakeoverAndDeadExecutorAreCalledOut() {
    explain::KeyHistory h;
    h.scope = *explain::Scope::parse(kScope);
    h.key = "k_slow";
    h.observedAt = at("2026-06-01T12:00:00Z");
    explain::Generation g;
    g.number = 1;
    g.live = true;
    g.state = "done";
    g.status = 201;
    g.resourceRef = "pay_9";
    g.createdAt = at("2026-06-01T11:00:00Z");
    g.expiresAt = at("2026-06-02T11:00:00Z");
    g.policy = explain::PolicyInForce{1, at("2026-01-01T00:00:00Z"), "x", true, json{{"lease", "30s"}}};
    h.generations = {g};
    explain::Event takeover;
    takeover.at = at("2026-06-01T11:00:45Z");
    takeover.generation = 1;
    takeover.outcome = "lease_takeover";
    explain::Event done = takeover;
    done.at = at("2026-06-01T11:00:46Z");
    done.outcome = "executed";
    done.status = 201;
    h.events = {takeover, done};
    auto x = explain::explain(h);
    QCOMPARE(x.executions, 2);
    QVERIFY2(x.narrative.find("a retry took it over and executed it again — 2 executions.") != std::string::npos,
             x.narrative.c_str());
    QCOMPARE(x.cause, std::string("an execution outlived its 30s lease and a retry took it over"));

    // A processing generation swept after its executor died: in doubt, not counted as done.
    explain::KeyHistory dead;
    dead.scope = h.scope;
    dead.key = "k_dead";
    dead.observedAt = h.observedAt;
    explain::Generation p;
    p.number = 1;
    p.state = "processing";
    p.createdAt = at("2026-06-01T09:00:00Z");
    p.expiresAt = at("2026-06-01T10:00:00Z");
    p.archivedAt = at("2026-06-01T10:01:00Z");
    p.archivedBy = "sweeper";
    dead.generations = {p};
    auto d = explain::explain(dead);
    QCOMPARE(d.executions, 0);
    QCOMPARE(d.inDoubt, 1);
    QVERIFY2(d.narrative.find("may or may not have run") != std::string::npos, d.narrative.c_str());
  }

  // ---- against the store -------------------------------------------------------------------
  void incidentFromTheStore() {
    test::TestDatabase db("explain_incident");
    auto c = db.connect();
    craftIncident(c);
    auto x = explain::explain(explain::loadByKey(c, "k_incident"));
    QCOMPARE(x.history.scope.text(), kScope);
    QCOMPARE(static_cast<int>(x.history.generations.size()), 2);
    QCOMPARE(static_cast<int>(x.history.events.size()), 5);
    QVERIFY(!x.history.generations[0].live);
    QVERIFY(x.history.generations[1].live);
    QVERIFY(x.history.generations[0].policy);
    QCOMPARE(x.history.generations[0].policy->tier.value("ttl", ""), std::string("24h"));
    QCOMPARE(x.executions, 2);
    QCOMPARE(x.narrative, kExpectedNarrative);

    // JSON: the stable fields, with the crafted values.
    const auto j = explain::toJson(x);
    for (const char* field : {"scope", "key", "executions", "generations", "events", "narrative"})
      QVERIFY2(j.contains(field), field);
    QCOMPARE(j["scope"].get<std::string>(), kScope);
    QCOMPARE(j["key"].get<std::string>(), std::string("k_incident"));
    QCOMPARE(j["executions"].get<int>(), 2);
    QCOMPARE(j["generations"].size(), std::size_t{2});
    for (const auto& g : j["generations"])
      for (const char* field : {"generation", "created_at", "expires_at", "archived_at", "state", "status",
                                "resource_ref", "replays"})
        QVERIFY2(g.contains(field), field);
    QCOMPARE(j["generations"][0]["replays"].get<int>(), 3);
    QCOMPARE(j["generations"][0]["archived_at"].get<std::string>(), std::string("2026-03-03T10:05:00Z"));
    QCOMPARE(j["generations"][0]["created_at"].get<std::string>(), std::string("2026-03-02T10:00:00Z"));
    QCOMPARE(j["generations"][1]["resource_ref"].get<std::string>(), std::string("pay_456"));
    QVERIFY(j["generations"][1]["archived_at"].is_null());
    QCOMPARE(j["events"].size(), std::size_t{5});
    for (const auto& e : j["events"])
      for (const char* field : {"at", "outcome", "generation", "status", "latency_ms", "request_id"})
        QVERIFY2(e.contains(field), field);
    QCOMPARE(j["events"][0]["at"].get<std::string>(), std::string("2026-03-02T10:00:00.120Z"));
    QCOMPARE(j["events"][0]["latency_ms"].get<double>(), 120.0);
    QVERIFY(j["events"][1]["latency_ms"].is_null());
    QCOMPARE(j["events"][4]["outcome"].get<std::string>(), std::string("executed_after_expiry"));
    QCOMPARE(j["narrative"].get<std::string>(), kExpectedNarrative);

    // Markdown: heading, summary, table of generations, timeline.
    const std::string md = explain::toMarkdown(x);
    QVERIFY2(md.starts_with("## Idempotency key `k_incident`"), md.c_str());
    QVERIFY2(md.find("**Executions: 2**") != std::string::npos, md.c_str());
    QVERIFY2(md.find("| Generation | State | Status | Resource |") != std::string::npos, md.c_str());
    QVERIFY2(md.find("| 1 | done | 201 | `pay_123` | 2 Mar 2026, 10:00:00 UTC | 3 Mar 2026, 10:00:00 UTC | "
                     "3 Mar 2026, 10:05:00 UTC (sweeper) | 3 | v1 |") != std::string::npos,
             md.c_str());
    QVERIFY2(md.find("| 2 | done | 201 | `pay_456` |") != std::string::npos, md.c_str());
    QVERIFY2(md.find("### Timeline") != std::string::npos, md.c_str());
    QVERIFY2(md.find("- **3 Mar 2026, 10:32:00 UTC** — executed\\_after\\_expiry (generation 2, 201, 95 ms") !=
                 std::string::npos,
             md.c_str());

    // A capped timeline lists the first events and says how many more there are.
    const std::string capped = explain::toMarkdown(x, 2);
    QVERIFY2(capped.find("executed\\_after\\_expiry") == std::string::npos, capped.c_str());
    QVERIFY2(capped.find("- … and " + std::to_string(x.history.events.size() - 2) + " more events") !=
                 std::string::npos,
             capped.c_str());
  }

  void aFoldedStormCountsEveryReplayItStandsFor() {
    test::TestDatabase db("explain_storm");
    auto c = db.connect();
    craftIncident(c);
    c.exec("INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, status, latency_ms,"
           " request_id, repeats, last_at) VALUES ('2026-03-03T10:33:00Z', 'acct_42', 'POST /v1/payments',"
           " 'k_incident', 2, 'payments', 'replayed', 201, 4.5, 'req_storm_last', 40, '2026-03-03T10:33:00.090Z')");
    const auto x = explain::explain(explain::loadByKey(c, "k_incident"));
    QCOMPARE(x.generations[1].replays, 40);
    QCOMPARE(x.generations[0].replays, 3);
    QVERIFY2(x.narrative.find("Replayed 40 times") != std::string::npos, x.narrative.c_str());
    QVERIFY2(x.narrative.find("last at 3 Mar 2026, 10:33 UTC") != std::string::npos, x.narrative.c_str());

    const auto j = explain::toJson(x);
    QCOMPARE(j["generations"][1]["replays"].get<int>(), 40);
    const auto& folded = j["events"][5];
    QCOMPARE(folded["repeats"].get<int>(), 40);
    QCOMPARE(folded["last_at"].get<std::string>(), std::string("2026-03-03T10:33:00.090Z"));
    QCOMPARE(j["events"][0]["repeats"].get<int>(), 1);
    QVERIFY(j["events"][0]["last_at"].is_null());

    const std::string md = explain::toMarkdown(x);
    QVERIFY2(md.find("40 identical decisions until 3 Mar 2026, 10:33:00 UTC, folded into one trace row") !=
                 std::string::npos,
             md.c_str());
    QVERIFY2(md.find("slowest 4.5 ms, last request `req_storm_last`") != std::string::npos, md.c_str());
  }

  void lookupByResourceAndScope() {
    test::TestDatabase db("explain_lookup");
    auto c = db.connect();
    craftIncident(c);
    // The customer quotes the first payment's id (archived) or the second's (live).
    QCOMPARE(explain::loadByResource(c, "pay_123").key, std::string("k_incident"));
    auto live = explain::loadByResource(c, "pay_456");
    QCOMPARE(live.key, std::string("k_incident"));
    QCOMPARE(live.scope.text(), kScope);
    QCOMPARE(static_cast<int>(live.generations.size()), 2);

    try {
      (void)explain::loadByKey(c, "k_shared");
      QFAIL("a key in two scopes needs --scope");
    } catch (const explain::Ambiguous& e) {
      QCOMPARE(static_cast<int>(e.candidates().size()), 2);
      const std::string what = e.what();
      QVERIFY2(what.find("acct_1 POST /v1/payments") != std::string::npos, e.what());
      QVERIFY2(what.find("acct_2 POST /v1/payments") != std::string::npos, e.what());
    }
    auto scoped = explain::loadByKey(c, "k_shared", explain::Scope::parse("acct_2 POST /v1/payments"));
    QCOMPARE(scoped.generations.at(0).resourceRef.value_or(""), std::string("pay_s2"));

    QVERIFY_THROWS_EXCEPTION(explain::NotFound, (void)explain::loadByKey(c, "k_unknown"));
    QVERIFY_THROWS_EXCEPTION(explain::NotFound,
                             (void)explain::loadByKey(c, "k_incident", explain::Scope::parse("acct_9 POST /v1/payments")));
    QVERIFY_THROWS_EXCEPTION(explain::NotFound, (void)explain::loadByResource(c, "pay_nope"));
  }

  void scopeWithThePathTheClientSent() {
    // Support has the request as the client sent it; the key is stored under its route template.
    test::TestDatabase db("explain_template_scope");
    auto c = db.connect();
    const char* insert =
        "INSERT INTO idem.keys (tenant, endpoint, idem_key, tier, fingerprint, state, resp_status, resource_ref,"
        "   created_at, expires_at) VALUES ($1, $2, $3, 'orders', '\\x01'::bytea, 'done', 200, $4,"
        "   '2026-05-01T08:00:00Z', '2026-05-02T08:00:00Z')";
    c.exec(insert, {"acct_1", "POST /v1/orders/{id}/capture", "k_cap", "cap_1"});
    c.exec(insert, {"acct_1", "POST /v1/orders/{id}/{action}", "k_cap", "act_1"});  // a less specific route
    c.exec(insert, {"acct_2", "POST /v1/orders/{id}/capture", "k_cap", "cap_2"});   // another tenant's
    c.exec(insert, {"acct_1", "POST /v1/orders/{id}/{action}", "k_refund", "act_2"});

    auto h = explain::loadByKey(c, "k_cap", explain::Scope::parse("acct_1 post /v1/orders/ord_9/capture"));
    QCOMPARE(h.scope.endpoint, std::string("POST /v1/orders/{id}/capture"));
    QCOMPARE(h.generations.at(0).resourceRef.value_or(""), std::string("cap_1"));
    h = explain::loadByKey(c, "k_refund", explain::Scope::parse("acct_1 POST /v1/orders/ord_9/refund"));
    QCOMPARE(h.scope.endpoint, std::string("POST /v1/orders/{id}/{action}"));
    // The template spelling still works; a path no route of the key matches, another tenant's
    // key or another method finds nothing.
    QCOMPARE(explain::loadByKey(c, "k_cap", explain::Scope::parse("acct_2 POST /v1/orders/{id}/capture"))
                 .generations.at(0).resourceRef.value_or(""),
             std::string("cap_2"));
    QVERIFY_THROWS_EXCEPTION(explain::NotFound,
                             (void)explain::loadByKey(c, "k_cap", explain::Scope::parse("acct_1 POST /v1/orders/ord_9")));
    QVERIFY_THROWS_EXCEPTION(explain::NotFound,
                             (void)explain::loadByKey(c, "k_refund", explain::Scope::parse("acct_2 POST /v1/orders/o/refund")));
    QVERIFY_THROWS_EXCEPTION(explain::NotFound,
                             (void)explain::loadByKey(c, "k_cap", explain::Scope::parse("acct_1 PUT /v1/orders/o/capture")));

    // Another service's policy chose for its own keys: its less specific route still counts.
    c.exec("INSERT INTO idem.keys (tenant, endpoint, idem_key, service, tier, fingerprint, state, resp_status,"
           " resource_ref, created_at, expires_at) VALUES ('acct_1', 'POST /v1/orders/{id}/{action}', 'k_cap',"
           " 'billing', 'orders', '\\x01'::bytea, 'done', 200, 'bill_1', '2026-05-01T08:00:00Z', '2026-05-02T08:00:00Z')");
    try {
      (void)explain::loadByKey(c, "k_cap", explain::Scope::parse("acct_1 POST /v1/orders/ord_9/capture"));
      QFAIL("the key in two services needs --service");
    } catch (const explain::Ambiguous& e) {
      QCOMPARE(static_cast<int>(e.candidates().size()), 2);
    }
    h = explain::loadByKey(c, "k_cap", explain::Scope::parse("acct_1 POST /v1/orders/ord_9/capture"), "billing");
    QCOMPARE(h.generations.at(0).resourceRef.value_or(""), std::string("bill_1"));
  }

  void cliJsonTextMarkdownAndErrors() {
    test::TestDatabase db("explain_cli");
    {
      auto c = db.connect();
      craftIncident(c);
    }
    std::string out;
    QCOMPARE(test::runIdemctl({"explain", "--db", db.conninfo(), "--key", "k_incident", "--format", "json"}, &out), 0);
    const json j = json::parse(out, nullptr, false);
    QVERIFY2(!j.is_discarded(), out.c_str());
    QCOMPARE(j["executions"].get<int>(), 2);
    QCOMPARE(j["narrative"].get<std::string>(), kExpectedNarrative);

    QCOMPARE(test::runIdemctl({"explain", "--db", db.conninfo(), "--key", "k_incident", "--scope", kScope}, &out), 0);
    QVERIFY2(out.find("Executions:  2") != std::string::npos, out.c_str());
    QVERIFY2(out.find("Scope:       " + kScope) != std::string::npos, out.c_str());
    QVERIFY2(out.find("executed_after_expiry") != std::string::npos, out.c_str());
    // The narrative is wrapped for the terminal: compare with the line breaks folded.
    const std::string folded = QString::fromStdString(out).simplified().toStdString();
    QVERIFY2(folded.find("32 min after expiry") != std::string::npos, out.c_str());
    QVERIFY2(folded.find("— 2 executions.") != std::string::npos, out.c_str());

    QCOMPARE(test::runIdemctl({"explain", "--db", db.conninfo(), "--resource", "pay_123", "--format", "markdown"}, &out),
             0);
    QVERIFY2(out.find("### Generations") != std::string::npos, out.c_str());

    QCOMPARE(test::runIdemctl({"explain", "--db", db.conninfo(), "--key", "k_unknown"}, &out), 1);
    QVERIFY2(out.find("no idempotency key 'k_unknown'") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"explain", "--db", db.conninfo(), "--key", "k_shared"}, &out), 2);
    QVERIFY2(out.find("acct_1 POST /v1/payments") != std::string::npos, out.c_str());
    QVERIFY2(out.find("--scope") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"explain", "--db", db.conninfo()}, &out), 2);
    QCOMPARE(test::runIdemctl({"explain", "--db", db.conninfo(), "--key", "k", "--format", "xml"}, &out), 2);
    QCOMPARE(test::runIdemctl({"explain", "--db", db.conninfo(), "--key", "k", "--scope", "acct"}, &out), 2);
  }
};

QTEST_GUILESS_MAIN(TestExplain)
#include "tst_explain.moc"
