// The decisions `serve` and `proxy` once made each their own way (issue 28: the drift list),
// now made once in the gate (docs/design.md §5) and tested for both shapes of an execution:
// one outcome vocabulary; where a tenant is required; the canonical path; refusals counted
// under their tier; what an unknown or released outcome does to the key and its label; one
// Request-Id; a key or tenant header named in Connection; one internal-error wording.
#include <QtTest>

#include "core/trace/outcome.h"
#include "tests/endpoint/raw_http.h"
#include "tests/gate/gate_support.h"

using namespace idem;

class TstRules : public QObject {
  Q_OBJECT

  std::unique_ptr<test::GatePair> m_pair;

  static std::string typeOf(const client::ClientResponse& r) {
    return test::problemOf(r).value("type", std::string());
  }

 private slots:
  void initTestCase() { m_pair = std::make_unique<test::GatePair>("gate_rules"); }
  void cleanupTestCase() { m_pair.reset(); }
  void initTestCase_data() { test::GatePair::addShapes(); }

  // Every outcome the trace records is a label of its own, spelt as the trace spells it: the
  // gate passes the store's decisions through unrenamed (an unknown one would count as error).
  // Under rollout observe the request's label is `observed` and the trace names the decision
  // that was not enforced: observed_<label>, the label being the gate's own (observed_refused
  // carries it in its detail).
  void everyTraceOutcomeIsALabel() {
    for (const auto& facts : trace::kOutcomes) {
      if (facts.kind == trace::OutcomeKind::Observed) {
        QVERIFY(facts.sql.starts_with("observed_"));
        const std::string_view would = facts.sql.substr(std::string_view("observed_").size());
        QVERIFY2(would == "refused" || gate::outcomeNamed(would), std::string(facts.sql).c_str());
        QCOMPARE(trace::observedOutcome(would), facts.outcome);
        continue;
      }
      const auto named = gate::outcomeNamed(facts.sql);
      QVERIFY2(named.has_value(), std::string(facts.sql).c_str());
      QCOMPARE(gate::label(*named), facts.sql);
    }
    QVERIFY(!gate::outcomeNamed("unenforced"));  // serve's old spelling is gone
  }

  // One spelling per outcome for both fronts (serve said `unenforced`, the proxy `forwarded`;
  // serve's early refusals had labels of their own, the proxy's `bad_request`), and a refusal
  // on a tier's route is counted under that tier (serve's were, the proxy's were not).
  void outcomesAreOneVocabularyAndRefusalsKeepTheirTier() {
    auto& s = m_pair->server();
    const long long forwarded = s.requests("", "forwarded", 201);
    const long long unkeyed = s.requests("notes", "passed_without_key", 201);
    const long long refused = s.requests("charges", "bad_request", 415);
    QCOMPARE(s.post("/v1/other", test::keyed("")).status, 201);
    QCOMPARE(s.post("/v1/notes", test::keyed("")).status, 201);
    http::Headers refuse = test::keyed(test::GatePair::key("refused"));
    refuse.emplace_back("X-Refuse", "1");
    const int before = s.execution->calls();
    QCOMPARE(s.post("/v1/charges", refuse).status, 415);
    QCOMPARE(s.execution->calls(), before);  // refused before the claim: nothing ran or was stored
    QCOMPARE(s.requests("", "forwarded", 201), forwarded + 1);
    QCOMPARE(s.requests("notes", "passed_without_key", 201), unkeyed + 1);
    QCOMPARE(s.requests("charges", "bad_request", 415), refused + 1);
    // The corrected retry with the same key runs normally.
    QCOMPARE(s.post("/v1/charges", test::keyed(test::GatePair::key("refused"))).status, 201);
    QCOMPARE(s.execution->calls(), before + 1);
  }

  // A tenant is required on every route a tier covers and wherever the execution touches a
  // tenant's data; a route neither covers passes without one.
  void aTenantIsRequiredWhereATenantsDataIsTouched() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    const auto onTier = s.post("/v1/charges", test::keyed(test::GatePair::key("no-tenant"), ""));
    QCOMPARE(onTier.status, 400);
    QVERIFY2(typeOf(onTier).ends_with("#tenant-missing"), onTier.body.c_str());
    const auto onData = s.post("/tenant-data/list", test::keyed("", ""));
    QCOMPARE(onData.status, 400);
    QCOMPARE(s.execution->calls(), before);
    QCOMPARE(s.post("/v1/other", test::keyed("", "")).status, 201);
    QCOMPARE(s.execution->calls(), before + 1);
  }

  // An unsafe method's path is matched and executed in canonical form: every spelling of an
  // enforced route meets one key scope; the execution still sees the target as sent.
  void everySpellingOfARouteSharesOneKey() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    const auto odd = s.post("/V1//Charges/", test::keyed(test::GatePair::key("spelling")));
    QCOMPARE(odd.status, 201);
    QCOMPARE(s.execution->last().path, std::string("/v1/charges"));
    QCOMPARE(s.execution->last().target, std::string("/V1//Charges/"));
    const auto plain = s.post("/v1/charges", test::keyed(test::GatePair::key("spelling")));
    QCOMPARE(plain.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(s.execution->calls(), before + 1);
  }

  // An answer that may or may not reflect executed work is stored whatever the cache rule and
  // labelled outcome_unknown; a release stores nothing and is labelled released.
  void unknownIsStoredAndReleaseIsNot() {
    auto& s = m_pair->server();
    const long long unknownBefore = s.requests("charges", "outcome_unknown", 502);
    const long long releasedBefore = s.requests("charges", "released", 503);
    const int before = s.execution->calls();
    http::Headers unknown = test::keyed(test::GatePair::key("unknown"));
    unknown.emplace_back("X-Then", "unknown");
    QCOMPARE(s.post("/v1/charges", unknown).status, 502);
    const auto retried = s.post("/v1/charges", test::keyed(test::GatePair::key("unknown")));
    QCOMPARE(retried.status, 502);
    QCOMPARE(retried.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(s.execution->calls(), before + 1);
    QCOMPARE(s.requests("charges", "outcome_unknown", 502), unknownBefore + 1);

    http::Headers release = test::keyed(test::GatePair::key("release"));
    release.emplace_back("X-Then", "release");
    QCOMPARE(s.post("/v1/charges", release).status, 503);
    QCOMPARE(s.requests("charges", "released", 503), releasedBefore + 1);
    const auto again = s.post("/v1/charges", test::keyed(test::GatePair::key("release")));
    QCOMPARE(again.status, 201);  // the key was free again: the retry ran
    QCOMPARE(s.execution->calls(), before + 3);
  }

  // One Request-Id on every answer: the execution's own when it names one (the service's),
  // else the gate's.
  void oneRequestIdPerAnswer() {
    auto& s = m_pair->server();
    auto count = [](const std::string& raw) {
      int n = 0;
      for (auto at = raw.find("\r\nRequest-Id: "); at != std::string::npos; at = raw.find("\r\nRequest-Id: ", at + 1)) ++n;
      return n;
    };
    const std::string body = R"({"amount":1})";
    const std::string head = "POST /v1/other HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\nConnection: close\r\n";
    const std::string own = test::exchange(s.server->port(), head + "X-Own-Request-Id: 1\r\n\r\n" + body);
    QCOMPARE(test::statusOf(own), 201);
    QCOMPARE(count(own), 1);
    QVERIFY2(own.find("\r\nRequest-Id: svc_1\r\n") != std::string::npos, own.c_str());
    const std::string gates = test::exchange(s.server->port(), head + "\r\n" + body);
    QCOMPARE(count(gates), 1);
    QVERIFY2(gates.find("\r\nRequest-Id: req_") != std::string::npos, gates.c_str());
  }

  // A header the gate decides on cannot also be one the next hop must drop: refused, not run.
  void aKeyOrTenantNamedInConnectionIsRefused() {
    auto& s = m_pair->server();
    const int before = s.execution->calls();
    const std::string body = R"({"amount":1})";
    for (const std::string named : {"Idempotency-Key", "account-id"}) {
      const std::string raw = test::exchange(
          s.server->port(), "POST /v1/charges HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccount-Id: "
                            "acct_1\r\nIdempotency-Key: " + test::GatePair::key("connection") + "\r\nConnection: close, " + named +
                                "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
      QCOMPARE(test::statusOf(raw), 400);
      QVERIFY2(raw.find("#header-in-connection") != std::string::npos, raw.c_str());
    }
    QCOMPARE(s.execution->calls(), before);
  }

  // An execution that throws: one wording for both fronts, labelled error; under after-start
  // the abandoned key keeps a 500 and a retry never runs the work a second time.
  void aFailureInsideTheExecutionIsOne500() {
    auto& s = m_pair->server();
    const long long errors = s.requests("charges", "error", 500);
    const int before = s.execution->calls();
    http::Headers throws = test::keyed(test::GatePair::key("throws"));
    throws.emplace_back("X-Throw", "1");
    const auto failed = s.post("/v1/charges", throws);
    QCOMPARE(failed.status, 500);
    QVERIFY2(test::problemOf(failed)["detail"].get<std::string>().starts_with(
                 "The server failed while handling the request."),
             failed.body.c_str());
    QCOMPARE(failed.header("Idempotency-Key"), "\"" + test::GatePair::key("throws") + "\"");
    QCOMPARE(s.requests("charges", "error", 500), errors + 1);
    // The 500 was the key's before the client had it: the retry at once replays it.
    const auto retry = s.post("/v1/charges", test::keyed(test::GatePair::key("throws")));
    QCOMPARE(retry.status, 500);
    QCOMPARE(retry.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(s.execution->calls(), before + 1);
  }
};

QTEST_GUILESS_MAIN(TstRules)
#include "tst_rules.moc"
