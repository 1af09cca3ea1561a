// When the proxy holding a key dies after sending its request (docs/proxy.md, "When the proxy
// itself dies"), counted from the service's own ledger: the service charged once and does not
// roll back with the key, so a retry that takes the key over once the dead proxy's lease ran out
// is answered "outcome unknown" (502, stored, replayed to later retries), never sent again —
// unless the tier says `on_takeover: execute` (a service that honours the forwarded key itself),
// where it is sent again as documented. The published policy says which.
#include <QtTest>
#include <future>
#include <nlohmann/json.hpp>

#include "tests/proxy/proxy_support.h"

using namespace idem;
using nlohmann::json;
using test::charge;
using test::kCharge;

namespace {
// (ordinary literals: moc cannot parse raw strings)
const char* const kPolicy =
    "{ \"docs_url\": \"https://docs.test/idempotency\",\n"
    "  \"tiers\": [\n"
    "    { \"name\": \"charges\", \"routes\": [\"POST /v1/charges\"], \"ttl\": \"1h\", \"lease\": \"1s\" },\n"
    "    { \"name\": \"resent\", \"routes\": [\"POST /v1/renewals\"], \"ttl\": \"1h\", \"lease\": \"1s\",\n"
    "      \"on_takeover\": \"execute\" },\n"
    "    { \"name\": \"watched\", \"routes\": [\"POST /v1/short\"], \"ttl\": \"1h\", \"lease\": \"1s\",\n"
    "      \"rollout\": \"observe\" } ] }\n";

/// The first request: the service records its charge at once, then holds the answer 3 s, during
/// which the proxy that sent it is killed.
void sendAndKillTheProxy(test::ProxyRig& rig, const std::string& path, const std::string& key) {
  auto first = std::async(std::launch::async, [&] {
    client::Client c("127.0.0.1", rig.proxy->port(), std::chrono::seconds(10));
    try {
      return c.post(path, charge(key, {{"X-Test-Sleep-Ms", "3000"}}), kCharge).status;
    } catch (const std::exception&) {
      return 0;  // the proxy died under it: what a client sees
    }
  });
  QTRY_COMPARE_WITH_TIMEOUT(rig.upstream.executions(key), 1, 10000);
  rig.proxy->kill(SIGKILL);
  QCOMPARE(first.get(), 0);
  rig.startProxy({});  // a new proxy on the same store, as a supervisor would start
}

/// Retries as a client would (on 409, after Retry-After) until the key is no longer held.
client::ClientResponse retryUntilNotHeld(test::ProxyRig& rig, const std::string& path, const std::string& key) {
  client::Client c("127.0.0.1", rig.proxy->port(), std::chrono::seconds(10));
  client::ClientResponse r;
  for (int attempt = 0; attempt < 40; ++attempt) {
    r = c.post(path, charge(key), kCharge);
    if (r.status != 409) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return r;
}
}  // namespace

class TestProxyDies : public QObject {
  Q_OBJECT

 private slots:
  void aKeyTakenOverFromADeadProxyIsNotSentAgain() {
    test::ProxyRig rig("px_dies", {}, kPolicy);
    sendAndKillTheProxy(rig, "/v1/charges", "dies-1");
    const auto taken = retryUntilNotHeld(rig, "/v1/charges", "dies-1");
    QCOMPARE(taken.status, 502);
    const json problem = json::parse(taken.body);
    QCOMPARE(problem.value("type", ""), std::string("https://docs.test/idempotency#upstream-outcome-unknown"));
    QVERIFY(problem.value("detail", "").find("may already have been carried out") != std::string::npos);
    QVERIFY(taken.header("Idempotent-Replayed").empty());
    // Stored: later retries get the same answer, replayed, and the service is never asked again
    // (its first request finished meanwhile, still one charge).
    auto c = rig.client();
    const auto again = c->post("/v1/charges", charge("dies-1"), kCharge);
    QCOMPARE(again.status, 502);
    QCOMPARE(again.header("Idempotent-Replayed"), std::string("true"));
    std::this_thread::sleep_for(std::chrono::milliseconds(3200));
    QCOMPARE(rig.upstream.executions("dies-1"), 1);
    QTRY_COMPARE(rig.events("dies-1", "lease_takeover"), 1LL);
    QTRY_COMPARE(rig.events("dies-1", "outcome_unknown"), 1LL);
    QCOMPARE(rig.db.connect()
                 .exec("SELECT state || ' ' || resp_status AS s FROM idem.keys WHERE idem_key = 'dies-1'")
                 .str(0, "s"),
             std::string("done 502"));
  }

  // Sent again where the tier says `on_takeover: execute` — the documented cost in front of a
  // service that does not honour the key: two charges — and under observe, where the proxy
  // enforces nothing (docs/proxy.md, "Rollout") and the retry goes as it did before Idem stood there.
  void aTierThatSaysSoSendsItAgain_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("on_takeover: execute") << "/v1/renewals";
    QTest::newRow("rollout: observe") << "/v1/short";
  }
  void aTierThatSaysSoSendsItAgain() {
    QFETCH(QString, path);
    test::ProxyRig rig("px_dies_resend", {}, kPolicy);
    sendAndKillTheProxy(rig, path.toStdString(), "dies-2");
    const auto taken = retryUntilNotHeld(rig, path.toStdString(), "dies-2");
    QCOMPARE(taken.status, 201);
    QCOMPARE(rig.upstream.executions("dies-2"), 2);
  }

  void thePublishedPolicySaysWhatATakeoverDoes() {
    test::ProxyRig rig("px_dies_published", {}, kPolicy);
    client::Client c("127.0.0.1", rig.adminPort());
    const auto page = c.get("/idempotency", {{"Accept", "application/json"}});
    QCOMPARE(page.status, 200);
    const json tiers = json::parse(page.body).at("tiers");
    QCOMPARE(tiers.at(0).value("on_takeover", ""), std::string("outcome_unknown"));  // the proxy's own rule
    QCOMPARE(tiers.at(1).value("on_takeover", ""), std::string("execute"));          // the tier's
    const auto html = c.get("/idempotency", {{"Accept", "text/html"}});
    QVERIFY(html.body.find("upstream-outcome-unknown</code>, stored for the key") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestProxyDies)
#include "tst_proxydies.moc"
