// docs/design.md §2, row by row, through real HTTP on loopback against real PostgreSQL: status,
// problem+json, Idempotent-Replayed, Retry-After, Idempotency-Expires, the echoed key, bodies,
// and the ledger (one row per execution).
#include <QtTest>
#include <future>
#include <thread>

#include "tests/endpoint/endpoint_support.h"

using namespace idem;
using client::ClientResponse;
using test::jsonHeaders;
using test::kPayment;
using test::parse;

namespace {
const std::string kProblem = "application/problem+json";
// moc cannot parse a raw string spanning lines inside a class: keep policies out here.
const char* const kShortLeasePolicy = R"({"docs_url":"https://d/i","tenant_header":"Account-Id","tenant_required":false,"tiers":[)"
                                      R"({"name":"payments","routes":["POST /v1/payments"],"ttl":"1h","lease":"1s"}]})";

// Idempotency-Expires is an IMF-fixdate; parse it back to epoch seconds.
long long parseHttpDate(const std::string& s) {
  std::tm tm{};
  if (!strptime(s.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm)) return -1;
  return static_cast<long long>(timegm(&tm));
}
long long nowSeconds() { return static_cast<long long>(std::time(nullptr)); }
}  // namespace

class TestDecisions : public QObject {
  Q_OBJECT

  std::unique_ptr<test::LiveServer> m_s;
  // The policy's docs_url: what clients see in problem types (issue 31), not the server's address.
  std::string docs() const { return "https://docs.test/idempotency"; }
  ClientResponse post(const std::string& path, const std::string& key, const std::string& body,
                      http::Headers extra = {}, const std::string& tenant = "acct_1") {
    auto h = jsonHeaders(key, tenant);
    h.insert(h.end(), extra.begin(), extra.end());
    return m_s->client()->post(path, h, body);
  }

 private slots:
  void initTestCase() { m_s = std::make_unique<test::LiveServer>("ep_decisions"); }
  void cleanupTestCase() { m_s.reset(); }

  void noKeyIs400LinkingThePolicy() {
    auto r = post("/v1/payments", "", kPayment);
    QCOMPARE(r.status, 400);
    QCOMPARE(r.header("Content-Type"), kProblem);
    QCOMPARE(parse(r)["type"].get<std::string>(), docs() + "#key-missing");
    QVERIFY(r.header("Idempotent-Replayed").empty());
    QCOMPARE(m_s->count("SELECT count(*) AS n FROM idem_demo.ledger WHERE tenant = 'acct_1' AND idem_key IS NULL"),
             0LL);
  }

  void malformedKeyIs400NamingTheRule() {
    auto r = post("/v1/payments", "has space", kPayment);
    QCOMPARE(r.status, 400);
    QCOMPARE(r.header("Content-Type"), kProblem);
    auto b = parse(r);
    QCOMPARE(b["type"].get<std::string>(), docs() + "#key-malformed");
    QVERIFY(!b["detail"].get<std::string>().empty());
    QCOMPARE(m_s->keyRows("has space"), 0LL);
  }

  void unseenKeyExecutesOnceWithLedgerRow() {
    auto r = post("/v1/payments", "fresh-1", kPayment);
    QCOMPARE(r.status, 201);
    QCOMPARE(r.header("Content-Type"), std::string("application/json"));
    QCOMPARE(r.header("Idempotency-Key"), std::string("\"fresh-1\""));  // echoed as an sf-string
    QVERIFY(r.header("Idempotent-Replayed").empty());
    const long long expires = parseHttpDate(r.header("Idempotency-Expires"));
    QVERIFY2(std::llabs(expires - (nowSeconds() + 3600)) <= 5, r.header("Idempotency-Expires").c_str());
    auto b = parse(r);
    QVERIFY(b["id"].get<std::string>().rfind("pay_", 0) == 0);
    QCOMPARE(b["amount"].get<int>(), 1000);
    QCOMPARE(b["currency"].get<std::string>(), std::string("usd"));
    QCOMPARE(b["customer"].get<std::string>(), std::string("cus_1"));
    QCOMPARE(b["status"].get<std::string>(), std::string("succeeded"));
    QCOMPARE(r.header("Location"), "/v1/payments/" + b["id"].get<std::string>());
    QVERIFY(!r.header("Request-Id").empty());

    // The ledger row: same id, key, generation 1, the downstream key as an sf-string.
    auto list = m_s->client()->get("/v1/payments?idempotency_key=fresh-1", {{"Account-Id", "acct_1"}});
    QCOMPARE(list.status, 200);
    auto data = parse(list)["data"];
    QCOMPARE(data.size(), std::size_t(1));
    QCOMPARE(data[0]["id"], b["id"]);
    QCOMPARE(data[0]["generation"].get<int>(), 1);
    QCOMPARE(data[0]["ledger_status"].get<std::string>(), std::string("succeeded"));
    QCOMPARE(data[0]["downstream_idempotency_key"].get<std::string>(), std::string("\"fresh-1\""));
    // Tenant-scoped: another account sees nothing under the same key.
    auto other = m_s->client()->get("/v1/payments?idempotency_key=fresh-1", {{"Account-Id", "acct_2"}});
    QCOMPARE(parse(other)["data"].size(), std::size_t(0));
    auto one = m_s->client()->get("/v1/payments/" + b["id"].get<std::string>(), {{"Account-Id", "acct_1"}});
    QCOMPARE(one.status, 200);
    QCOMPARE(parse(one)["id"], b["id"]);
  }

  void doneKeyReplaysStatusHeadersAndBody() {
    auto first = post("/v1/payments", "replay-1", kPayment);
    QCOMPARE(first.status, 201);
    // A bare and an sf-string key are the same key; whitespace and key order do not matter (json mode).
    auto again = post("/v1/payments", "\"replay-1\"", R"({ "customer": "cus_1", "currency": "usd", "amount": 1000 })");
    QCOMPARE(again.status, 201);
    QCOMPARE(again.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(again.body, first.body);
    QCOMPARE(again.header("Location"), first.header("Location"));
    QCOMPARE(again.header("Content-Type"), std::string("application/json"));
    QCOMPARE(again.header("Idempotency-Key"), std::string("\"replay-1\""));
    QCOMPARE(again.header("Idempotency-Expires"), first.header("Idempotency-Expires"));
    QVERIFY(again.header("Request-Id") != first.header("Request-Id"));
    QCOMPARE(m_s->ledgerRows("replay-1"), 1LL);
  }

  void sameKeyOtherTenantIsAnotherKey() {
    QCOMPARE(post("/v1/payments", "tenant-k", kPayment, {}, "acct_1").status, 201);
    auto r = post("/v1/payments", "tenant-k", kPayment, {}, "acct_2");
    QCOMPARE(r.status, 201);
    QVERIFY(r.header("Idempotent-Replayed").empty());
    QCOMPARE(m_s->ledgerRows("tenant-k"), 2LL);
  }

  void differentPayloadIs422() {
    QCOMPARE(post("/v1/payments", "mismatch-1", kPayment).status, 201);
    auto r = post("/v1/payments", "mismatch-1", R"({"amount":999,"currency":"usd","customer":"cus_1"})");
    QCOMPARE(r.status, 422);
    QCOMPARE(r.header("Content-Type"), kProblem);
    QCOMPARE(parse(r)["type"].get<std::string>(), docs() + "#payload-mismatch");
    QCOMPARE(r.header("Idempotency-Key"), std::string("\"mismatch-1\""));
    QVERIFY(!r.header("Idempotency-Expires").empty());
    QCOMPARE(m_s->ledgerRows("mismatch-1"), 1LL);
  }

  void processingIs409WithRetryAfterAndMismatchWins() {
    auto slow = std::async(std::launch::async, [&] {
      return post("/v1/payments", "busy-1", kPayment, {{"Sim-Delay-Ms", "1500"}});
    });
    QThread::msleep(400);
    auto r = post("/v1/payments", "busy-1", kPayment);
    QCOMPARE(r.status, 409);
    QCOMPARE(r.header("Content-Type"), kProblem);
    QCOMPARE(parse(r)["type"].get<std::string>(), docs() + "#request-in-progress");
    QVERIFY(std::stoi(r.header("Retry-After")) >= 1);
    QCOMPARE(r.header("Idempotency-Key"), std::string("\"busy-1\""));
    QVERIFY(!r.header("Idempotency-Expires").empty());
    // Same key, different payload, original still processing: 422 takes precedence over 409.
    auto m = post("/v1/payments", "busy-1", R"({"amount":1,"currency":"usd","customer":"cus_1"})");
    QCOMPARE(m.status, 422);
    QCOMPARE(slow.get().status, 201);
    QCOMPARE(m_s->ledgerRows("busy-1"), 1LL);
  }

  void waitTierWaitsThenReplays() {
    auto slow = std::async(std::launch::async, [&] {
      return post("/v1/orders", "wait-1", R"({"item":"sku_1","quantity":2})", {{"Sim-Delay-Ms", "800"}});
    });
    QThread::msleep(200);
    auto r = post("/v1/orders", "wait-1", R"({"item":"sku_1","quantity":2,"note":"ignored by fields mode"})");
    auto original = slow.get();
    QCOMPARE(original.status, 201);
    QCOMPARE(r.status, 201);
    QCOMPARE(r.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(r.body, original.body);
    QCOMPARE(m_s->ledgerRows("wait-1"), 1LL);
  }

  void expiredKeyExecutesAgainAsNewGeneration() {
    auto first = post("/v1/refunds", "exp-exec", R"({"payment":"pay_1","amount":500})");
    QCOMPARE(first.status, 201);
    QThread::msleep(1300);  // refunds: ttl 1s, on_expired execute
    auto second = post("/v1/refunds", "exp-exec", R"({"payment":"pay_1","amount":500})");
    QCOMPARE(second.status, 201);
    QVERIFY(second.header("Idempotent-Replayed").empty());
    QVERIFY(parse(second)["id"] != parse(first)["id"]);
    QCOMPARE(m_s->count("SELECT count(*) AS n FROM idem_demo.ledger WHERE idem_key = 'exp-exec' AND generation = 2"),
             1LL);
    QCOMPARE(m_s->ledgerRows("exp-exec"), 2LL);
    QCOMPARE(m_s->count("SELECT count(*) AS n FROM idem.key_archive WHERE idem_key = 'exp-exec'"), 1LL);
  }

  void expiredKeyRejectedIs422() {
    const std::string body = R"({"event":"evt_1"})";
    QCOMPARE(post("/v1/webhooks/ack", "exp-rej", body).status, 200);
    QThread::msleep(1300);  // webhooks: ttl 1s, on_expired reject
    auto r = post("/v1/webhooks/ack", "exp-rej", body);
    QCOMPARE(r.status, 422);
    QCOMPARE(r.header("Content-Type"), kProblem);
    QCOMPARE(parse(r)["type"].get<std::string>(), docs() + "#key-expired");
    QVERIFY(parse(r)["detail"].get<std::string>().find("reconcile") != std::string::npos);
    QCOMPARE(m_s->ledgerRows("exp-rej"), 1LL);
  }

  void optionalKeyAbsentExecutesUnkeyed() {
    auto r = post("/v1/webhooks/ack", "", R"({"event":"evt_unkeyed"})");
    QCOMPARE(r.status, 200);
    QVERIFY(r.header("Idempotency-Key").empty());
    QCOMPARE(m_s->count("SELECT count(*) AS n FROM idem_demo.ledger WHERE payload->>'event' = 'evt_unkeyed'"), 1LL);
  }

  void failureAfterStartIsStoredAndReplayed() {
    auto r = post("/v1/payments", "fail-after", kPayment, {{"Sim-Fail", "after"}});
    QCOMPARE(r.status, 500);
    QCOMPARE(r.header("Content-Type"), kProblem);
    auto again = post("/v1/payments", "fail-after", kPayment);
    QCOMPARE(again.status, 500);
    QCOMPARE(again.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(again.body, r.body);
    QCOMPARE(m_s->count("SELECT count(*) AS n FROM idem_demo.ledger WHERE idem_key = 'fail-after' AND status = "
                        "'failed'"),
             1LL);
  }

  void failureBeforeStartIsNotStored() {
    auto r = post("/v1/payments", "fail-before", kPayment, {{"Sim-Fail", "before"}});
    QCOMPARE(r.status, 503);
    QCOMPARE(r.header("Content-Type"), kProblem);
    QVERIFY(std::stoi(r.header("Retry-After")) >= 1);
    QCOMPARE(m_s->keyRows("fail-before"), 0LL);
    auto retry = post("/v1/payments", "fail-before", kPayment);
    QCOMPARE(retry.status, 201);
    QVERIFY(retry.header("Idempotent-Replayed").empty());
    QCOMPARE(m_s->ledgerRows("fail-before"), 1LL);
  }

  void aLiveExecutionIsNeverTakenOver() {
    // Lease beats a long request: the executor renews its 1s lease while it runs, so a retry
    // during a 2.5s execution gets 409 (never a takeover and a second execution), and the
    // original's answer is the one stored. Takeover of a dead executor: tst_crash.
    test::LiveServer s("ep_takeover", kShortLeasePolicy);
    auto slow = std::async(std::launch::async, [&] {
      return s.client()->post(
          "/v1/payments",
          {{"Content-Type", "application/json"}, {"Idempotency-Key", "lease-1"}, {"Sim-Delay-Ms", "2500"}}, kPayment);
    });
    QThread::msleep(1400);  // past the 1s lease the original started with
    auto r = s.client()->post("/v1/payments", jsonHeaders("lease-1", ""), kPayment);
    QCOMPARE(r.status, 409);
    QVERIFY(std::stoi(r.header("Retry-After")) >= 1);
    auto original = slow.get();
    QCOMPARE(original.status, 201);
    QCOMPARE(s.ledgerRows("lease-1"), 1LL);
    QVERIFY(test::metricValue(s.client()->get("/metrics").body, "idem_leases_renewed_total") > 0);
    QCOMPARE(s.count("SELECT count(*) AS n FROM idem.events WHERE idem_key = 'lease-1' AND outcome = "
                     "'lease_takeover'"),
             0LL);
    auto replay = s.client()->post("/v1/payments", jsonHeaders("lease-1", ""), kPayment);
    QCOMPARE(replay.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(replay.body, original.body);
  }

  void publishedPolicyHtmlAndJson() {
    auto html = m_s->client()->get("/idempotency");
    QCOMPARE(html.status, 200);
    QVERIFY(html.header("Content-Type").rfind("text/html", 0) == 0);
    auto json = m_s->client()->get("/idempotency", {{"Accept", "application/json"}});
    QCOMPARE(json.status, 200);
    auto b = parse(json);
    QCOMPARE(b["docs_url"].get<std::string>(), docs());  // the operator's, as written
    QCOMPARE(b["tiers"].size(), std::size_t(4));
  }

  void metricsAndHealth() {
    QCOMPARE(post("/v1/payments", "metrics-1", kPayment).status, 201);
    QCOMPARE(post("/v1/payments", "metrics-1", kPayment).status, 201);
    auto m = m_s->client()->get("/metrics");
    QCOMPARE(m.status, 200);
    QVERIFY(m.header("Content-Type").rfind("text/plain", 0) == 0);
    QVERIFY(m.body.find("idem_requests_total{tier=\"payments\",outcome=\"replayed\",status=\"201\"}") !=
            std::string::npos);
    QVERIFY(m.body.find("idem_request_duration_seconds_bucket{outcome=\"executed\",le=\"+Inf\"}") != std::string::npos);
    QVERIFY(m.body.find("idem_store_pool_connections{state=\"idle\"}") != std::string::npos);
    QVERIFY(m.body.find("idem_trace_queue_events") != std::string::npos);
    // A direct connection keeps its prepared statements (tst_pgbouncer: a pooler turns them off).
    QVERIFY(m.body.find("\nidem_store_prepared_statements 1\n") != std::string::npos);
    // A new key and its retry through this server: one statement each.
    const auto counter = test::metricValue;
    const long long claims = counter(m.body, "idem_claims_total");
    const long long statements = counter(m.body, "idem_claim_statements_total");
    QVERIFY(claims >= 2 && statements >= claims);
    const std::string claimBatches = "idem_write_batches_total{kind=\"claim\"}";
    const std::string completionBatches = "idem_write_batches_total{kind=\"completion\"}";
    const std::string claimedKeys = "idem_write_batch_keys_total{kind=\"claim\"}";
    const std::string completedKeys = "idem_write_batch_keys_total{kind=\"completion\"}";
    const long long batchesBefore = counter(m.body, claimBatches), completionsBefore = counter(m.body, completionBatches);
    const long long claimedBefore = counter(m.body, claimedKeys), completedBefore = counter(m.body, completedKeys);
    QVERIFY(batchesBefore >= 1 && completionsBefore >= 0 && claimedBefore >= 1 && completedBefore >= 0);
    QCOMPARE(post("/v1/payments", "metrics-2", kPayment).status, 201);
    QCOMPARE(post("/v1/payments", "metrics-2", kPayment).status, 201);
    const auto after = m_s->client()->get("/metrics").body;
    QCOMPARE(counter(after, "idem_claims_total") - claims, 2LL);
    QCOMPARE(counter(after, "idem_claim_statements_total") - statements, 2LL);
    // The new key's claim went through the write path alone (one client): one batch of one key;
    // its retry wrote nothing. Its completion went with the demo's ledger row in a transaction of
    // its own, outside the batches (the proxy's completions are batched: tst_writebatches).
    QCOMPARE(counter(after, claimBatches) - batchesBefore, 1LL);
    QCOMPARE(counter(after, claimedKeys) - claimedBefore, 1LL);
    QCOMPARE(counter(after, completionBatches) - completionsBefore, 0LL);
    QCOMPARE(counter(after, completedKeys) - completedBefore, 0LL);
    // A process this quiet keeps every slot (the limit moves only under sustained load).
    QCOMPARE(counter(after, "idem_write_batches_in_flight_limit"), 8LL);
    QCOMPARE(counter(after, "idem_write_queued{kind=\"claim\"}"), 0LL);
    QCOMPARE(counter(after, "idem_claim_unseen_read_first"), 0LL);  // its new keys were new
    auto h = m_s->client()->get("/healthz");
    QCOMPARE(h.status, 200);
    QCOMPARE(parse(h)["store"].get<std::string>(), std::string("ok"));
  }
};

QTEST_GUILESS_MAIN(TestDecisions)
#include "tst_decisions.moc"
