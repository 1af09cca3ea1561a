// What crosses `idemctl proxy` and what does not: hop-by-hop headers stop at the proxy, the
// forwarding headers and the key (as the client sent it) reach the service, requests outside the
// policy pass untouched, the id of what the service created is stored with the key, the tenant is the gateway's and a client cannot pick another, /healthz
// and /metrics live on the admin listener only, upstream connections are reused, and SIGTERM
// finishes what is in flight.
#include <QtTest>
#include <future>
#include <nlohmann/json.hpp>

#include "tests/endpoint/raw_http.h"
#include "tests/proxy/proxy_support.h"

using namespace idem;
using nlohmann::json;
using test::charge;
using test::kCharge;

namespace {
json bodyOf(const std::string& raw) {
  const auto at = raw.find("\r\n\r\n");
  return json::parse(at == std::string::npos ? std::string() : raw.substr(at + 4), nullptr, false);
}
std::string headerOf(const std::string& raw, const std::string& name) {
  const auto head = raw.substr(0, raw.find("\r\n\r\n"));
  const std::string needle = "\r\n" + name + ": ";
  const auto at = head.find(needle);
  if (at == std::string::npos) return {};
  const auto from = at + needle.size();
  return head.substr(from, head.find("\r\n", from) - from);
}
}  // namespace

class TestForwarding : public QObject {
  Q_OBJECT

 private slots:
  void hopByHopHeadersStopAtTheProxy() {
    test::ProxyRig rig("px_hop");
    const std::string raw = test::exchange(rig.proxy->port(),
                                           "GET /headers HTTP/1.1\r\nHost: shop.test\r\n"
                                           "Connection: keep-alive, X-Secret-Hop\r\nX-Secret-Hop: 1\r\n"
                                           "Keep-Alive: timeout=5\r\nTE: trailers\r\nUpgrade: h2c\r\n"
                                           "Proxy-Authorization: Basic eDp5\r\nProxy-Connection: keep-alive\r\n"
                                           "X-Forwarded-For: 203.0.113.9\r\nRequest-Id: client-made\r\n"
                                           "X-End-To-End: kept\r\n\r\n");
    QCOMPARE(test::statusOf(raw), 200);
    const json seen = bodyOf(raw);
    QVERIFY2(seen.is_object(), raw.c_str());
    for (const char* gone : {"X-Secret-Hop", "Keep-Alive", "Te", "Upgrade", "Proxy-Authorization", "Proxy-Connection"})
      QVERIFY2(!seen.contains(gone), gone);
    QCOMPARE(seen.value("X-End-To-End", ""), std::string("kept"));
    // The client's own X-Forwarded-For is its claim, not the proxy's word: replaced.
    QCOMPARE(seen.value("X-Forwarded-For", ""), std::string("127.0.0.1"));
    QCOMPARE(seen.value("X-Forwarded-Proto", ""), std::string("http"));
    QCOMPARE(seen.value("X-Forwarded-Host", ""), std::string("shop.test"));
    QCOMPARE(seen.value("Forwarded", ""), std::string("for=127.0.0.1;proto=http;host=\"shop.test\""));
    QCOMPARE(seen.value("Host", ""), "127.0.0.1:" + std::to_string(rig.upstream.port()));
    // The service and the client's answer name the same request; the client's own id is not it.
    QCOMPARE(seen.value("Request-Id", ""), headerOf(raw, "Request-Id"));
    QVERIFY(headerOf(raw, "Request-Id").starts_with("req_"));

    // A chunked body reaches the service with its length instead of the client's framing.
    const std::string chunked = test::exchange(
        rig.proxy->port(),
        "POST /headers HTTP/1.1\r\nHost: shop.test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    QCOMPARE(test::statusOf(chunked), 200);
    const json seenChunked = bodyOf(chunked);
    QVERIFY(!seenChunked.contains("Transfer-Encoding"));
    QCOMPARE(seenChunked.value("Content-Length", ""), std::string("5"));
  }

  void storedAnswersAreStoredDecoded() {
    test::ProxyRig rig("px_encoding");
    auto c = rig.client();
    // On an enforced route the service is asked for an identity body: the stored answer must be
    // readable by every retry, whatever encodings that retry's client accepts.
    const auto enforced = c->post("/v1/headers", charge("enc-1", {{"Accept-Encoding", "gzip"}}), "{}");
    QCOMPARE(enforced.status, 200);
    QVERIFY2(!json::parse(enforced.body).contains("Accept-Encoding"), enforced.body.c_str());
    const auto plain = c->get("/headers", {{"Accept-Encoding", "gzip"}});
    QCOMPARE(json::parse(plain.body).value("Accept-Encoding", ""), std::string("gzip"));  // untouched
    // A service that compresses anyway: the replay carries the encoding with the bytes.
    const auto first = c->post("/v1/charges", charge("enc-2", {{"X-Test-Gzip", "1"}}), kCharge);
    QCOMPARE(first.status, 201);
    const auto replay = c->post("/v1/charges", charge("enc-2"), kCharge);
    QCOMPARE(replay.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(replay.header("Content-Encoding"), std::string("gzip"));
    QCOMPARE(replay.body, first.body);
  }

  void theKeyReachesTheServiceAndOtherRoutesPassUntouched() {
    test::ProxyRig rig("px_pass");
    auto c = rig.client();
    const auto created = c->post("/v1/charges", charge("pass-1"), kCharge);
    QCOMPARE(created.status, 201);
    // The service gets the key exactly as the client sent it: what it would see without the
    // proxy, and what it passes on to its own payment provider.
    QCOMPARE(json::parse(created.body).value("idempotency_key", ""), std::string("pass-1"));
    // The charge the service created is stored with the key: support finds it by the id the
    // customer quotes (the sample's Location: /v1/charges/<id>).
    const std::string chargeId = json::parse(created.body).value("id", "");
    QVERIFY(!chargeId.empty());
    QCOMPARE(rig.db.connect()
                 .exec("SELECT resource_ref FROM idem.keys WHERE idem_key = 'pass-1'")
                 .str(0, "resource_ref"),
             chargeId);
    const auto quoted = c->post("/v1/charges", charge("\"pass-3\""), kCharge);
    QCOMPARE(quoted.status, 201);
    QCOMPARE(json::parse(quoted.body).value("idempotency_key", ""), std::string("\"pass-3\""));
    // Both spellings are one key to Idem (docs/design.md §2): the other spelling replays.
    const auto respelled = c->post("/v1/charges", charge("pass-3"), kCharge);
    QCOMPARE(respelled.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(respelled.body, quoted.body);
    QCOMPARE(rig.upstream.executions("pass-3"), 1);
    const auto listed = c->get("/executions");
    QCOMPARE(listed.status, 200);
    QCOMPARE(json::parse(listed.body)["total"].get<int>(), 2);
    QVERIFY(listed.header("Idempotent-Replayed").empty());
    // A keyed POST the policy does not cover is refused, not forwarded: its retry would charge again.
    const auto uncovered = c->post("/v1/uncovered", charge("pass-2"), kCharge);
    QCOMPARE(uncovered.status, 400);
    QCOMPARE(rig.upstream.executions("pass-2"), 0);
    // Without a key it is the service's business, forwarded as is.
    QCOMPARE(c->post("/v1/uncovered", charge(""), kCharge).status, 201);
  }

  void aClientCannotPickAnotherTenant() {
    test::ProxyRig rig("px_tenant", {"--tenant-header", "X-Tenant-Id"});
    auto c = rig.client();
    // The gateway set acct_a for Alice's request and acct_b for Bob's; both used the key "t-1".
    const auto alice = c->post("/v1/charges", charge("t-1", {{"X-Tenant-Id", "acct_a"}}), kCharge);
    QCOMPARE(alice.status, 201);
    const auto bob = c->post("/v1/charges", charge("t-1", {{"X-Tenant-Id", "acct_b"}}), kCharge);
    QCOMPARE(bob.status, 201);
    QVERIFY(bob.header("Idempotent-Replayed").empty());  // Bob never gets Alice's answer
    QVERIFY(json::parse(bob.body)["id"] != json::parse(alice.body)["id"]);
    QCOMPARE(json::parse(bob.body).value("tenant", ""), std::string("acct_b"));
    // Bob sends his own X-Tenant-Id: acct_a and a gateway that appends adds acct_b: refused,
    // nothing reaches the service (a replacing gateway leaves only acct_b: Bob's own key).
    const auto forged =
        c->post("/v1/charges", charge("t-1", {{"X-Tenant-Id", "acct_a"}, {"X-Tenant-Id", "acct_b"}}), kCharge);
    QCOMPARE(forged.status, 400);
    QVERIFY(forged.header("Idempotent-Replayed").empty());
    // No tenant at all (the gateway was bypassed): refused rather than shared.
    QCOMPARE(c->post("/v1/charges", charge("t-2"), kCharge).status, 400);
    QCOMPARE(rig.upstream.executions("t-1", "acct_a"), 1);
    QCOMPARE(rig.upstream.executions("t-1", "acct_b"), 1);
    QCOMPARE(rig.upstream.executions("t-2", "-"), 0);
    // A repeated tenant header is refused on a route the policy does not cover too.
    QCOMPARE(c->get("/executions", {{"X-Tenant-Id", "a"}, {"X-Tenant-Id", "b"}}).status, 400);
  }

  // What a client says about earlier hops never reaches the service as the proxy's word: a
  // service that trusts its proxy's X-Forwarded-Proto would take "https" from anyone.
  void aClientsForwardingHeadersAreReplaced() {
    test::ProxyRig rig("px_fwdclaims");
    const std::string raw = test::exchange(rig.proxy->port(),
                                           "GET /headers HTTP/1.1\r\nHost: shop.test\r\n"
                                           "X-Forwarded-For: 203.0.113.9\r\nX-Forwarded-Host: bank.test\r\n"
                                           "X-Forwarded-Proto: https\r\nX-Forwarded-Port: 443\r\n"
                                           "X-Real-IP: 198.51.100.7\r\n"
                                           "Forwarded: for=198.51.100.7;proto=https;host=bank.test\r\n\r\n");
    QCOMPARE(test::statusOf(raw), 200);
    const json seen = bodyOf(raw);
    QVERIFY2(seen.is_object(), raw.c_str());
    QCOMPARE(seen.value("X-Forwarded-For", ""), std::string("127.0.0.1"));
    QCOMPARE(seen.value("X-Forwarded-Proto", ""), std::string("http"));
    QCOMPARE(seen.value("X-Forwarded-Host", ""), std::string("shop.test"));
    QCOMPARE(seen.value("Forwarded", ""), std::string("for=127.0.0.1;proto=http;host=\"shop.test\""));
    QVERIFY(!seen.contains("X-Forwarded-Port"));
    QVERIFY(!seen.contains("X-Real-Ip") && !seen.contains("X-Real-IP"));

    // From the gateway (a trusted peer) the chain is its word: kept, the proxy's hop appended.
    test::ProxyRig behindGateway("px_fwdtrusted", {"--tenant-header", "X-Tenant-Id", "--trusted-peers", "127.0.0.1"});
    const std::string viaGateway = test::exchange(behindGateway.proxy->port(),
                                                  "GET /headers HTTP/1.1\r\nHost: shop.test\r\n"
                                                  "X-Forwarded-For: 203.0.113.9\r\nX-Forwarded-Proto: https\r\n"
                                                  "X-Forwarded-Host: bank.test\r\n\r\n");
    QCOMPARE(test::statusOf(viaGateway), 200);
    const json kept = bodyOf(viaGateway);
    QCOMPARE(kept.value("X-Forwarded-For", ""), std::string("203.0.113.9, 127.0.0.1"));
    QCOMPARE(kept.value("X-Forwarded-Proto", ""), std::string("https"));
    QCOMPARE(kept.value("X-Forwarded-Host", ""), std::string("bank.test"));
  }

  // A header the proxy scopes the key by must reach the service too; one the client asks the
  // proxy to remove (Connection: NAME) would store an answer for a tenant the service never saw.
  void aDecisionHeaderNamedInConnectionIsRefused() {
    test::ProxyRig rig("px_connnamed", {"--tenant-header", "X-Tenant-Id"});
    auto c = rig.client();
    const auto hidden = c->post(
        "/v1/charges", charge("cn-1", {{"X-Tenant-Id", "acct_a"}, {"Connection", "keep-alive, x-tenant-id"}}), kCharge);
    QCOMPARE(hidden.status, 400);
    QVERIFY(hidden.body.find("Connection") != std::string::npos);
    const auto keyHidden = c->post(
        "/v1/charges", charge("cn-2", {{"X-Tenant-Id", "acct_a"}, {"Connection", "Idempotency-Key"}}), kCharge);
    QCOMPARE(keyHidden.status, 400);
    QCOMPARE(rig.upstream.executions("cn-1", "acct_a"), 0);
    QCOMPARE(rig.upstream.executions("cn-1", "-"), 0);
    QCOMPARE(rig.upstream.executions("cn-2", "acct_a"), 0);
    // Nothing was stored: the same key sent plainly executes once.
    QCOMPARE(c->post("/v1/charges", charge("cn-1", {{"X-Tenant-Id", "acct_a"}}), kCharge).status, 201);
    QCOMPARE(rig.upstream.executions("cn-1", "acct_a"), 1);
  }

  void adminEndpointsOnTheAdminListenerOnly() {
    test::ProxyRig rig("px_admin");
    QVERIFY(rig.adminPort() > 0);
    client::Client admin("127.0.0.1", rig.adminPort());
    const auto health = admin.get("/healthz");
    QCOMPARE(health.status, 200);
    QCOMPARE(json::parse(health.body).value("status", ""), std::string("ok"));
    // What an acknowledged key survives on this store (no standby here), as serve says it.
    QCOMPARE(json::parse(health.body).at("durability").value("level", ""), std::string("local"));
    auto c = rig.client();
    QCOMPARE(c->post("/v1/charges", charge("adm-1"), kCharge).status, 201);
    const auto metrics = admin.get("/metrics");
    QCOMPARE(metrics.status, 200);
    QVERIFY(metrics.body.find("outcome=\"executed\"") != std::string::npos);
    QCOMPARE(admin.get("/v1/charges").status, 404);  // the admin port forwards nothing
    // On the main port these paths belong to the service behind it (Flask's own 404).
    const auto forwarded = c->get("/healthz");
    QCOMPARE(forwarded.status, 404);
    QVERIFY(forwarded.header("Content-Type").find("text/html") != std::string::npos);
    QCOMPARE(c->get("/idempotency").status, 200);  // the published policy is the proxy's
  }

  void upstreamConnectionsAreKeptAlive() {
    // The Flask dev server closes every connection; `idemctl serve` keeps them alive, so it is
    // the upstream here: sequential requests through the proxy share one upstream connection.
    test::ProxyRig rig("px_pool");
    test::TestDatabase serviceDb("px_pool_serve");  // serve's own store, with the demo's tables
    test::ServeProcess service({"--db", serviceDb.conninfo()});
    test::ServeProcess proxy({"--db", rig.db.conninfo(), "--policy", (rig.dir / "policy.json").string(), "--upstream",
                              "http://127.0.0.1:" + std::to_string(service.port()), "--single-tenant"},
                             {}, "proxy");
    client::Client c("127.0.0.1", proxy.port());
    for (int i = 0; i < 20; ++i) QCOMPARE(c.get("/healthz").status, 200);  // serve's own /healthz
    client::Client admin("127.0.0.1", test::adminPortOf(proxy));
    const std::string metrics = admin.get("/metrics").body;
    QCOMPARE(test::metricSample(metrics, "idem_upstream_connections_opened_total"), 1LL);
    QCOMPARE(test::metricSample(metrics, "idem_upstream_connections_reused_total"), 19LL);
    QCOMPARE(test::metricSample(metrics, "idem_upstream_late_answers_pending"), 0LL);
  }

  void sigtermFinishesInFlightRequests() {
    test::ProxyRig rig("px_term");
    auto inFlight = std::async(std::launch::async, [port = rig.proxy->port()] {
      client::Client c("127.0.0.1", port, std::chrono::seconds(20));
      return c.post("/v1/charges", charge("term-1", {{"X-Test-Sleep-Ms", "1500"}}), kCharge);
    });
    QTRY_COMPARE_WITH_TIMEOUT(rig.upstream.executions("term-1"), 1, 5000);
    rig.proxy->kill(SIGTERM);
    const auto answered = inFlight.get();
    QCOMPARE(answered.status, 201);
    QCOMPARE(rig.proxy->wait(), 0);
    QVERIFY(rig.proxyLog().find("finishing in-flight requests") != std::string::npos);
    // The answer was stored before the proxy exited: a new proxy replays it.
    rig.startProxy({});
    const auto replay = rig.client()->post("/v1/charges", charge("term-1"), kCharge);
    QCOMPARE(replay.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(rig.upstream.executions("term-1"), 1);
  }
};

QTEST_GUILESS_MAIN(TestForwarding)
#include "tst_forwarding.moc"
