// A tier's `durability: synchronous` and the store's replication seen through a real
// `idemctl serve` on the suites' cluster, which has no standby: /healthz says what an
// acknowledged key survives and warns; /metrics counts; the refusing tier answers 503
// problem+json saying why on its routes only, and another tier runs. (tests/store/
// tst_durability covers a real asynchronous and synchronous standby.)
#include <QtTest>

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/client/client.h"
#include "tests/endpoint/endpoint_support.h"
#include "tests/endpoint/serve_process.h"
#include "tests/support/testdb.h"

using namespace idem;
using nlohmann::json;

namespace {

const char* const kPolicy =
    "{\"docs_url\":\"https://d/i\",\"tiers\":["
    "{\"name\":\"payments\",\"routes\":[\"POST /v1/payments\"],\"ttl\":\"1h\",\"durability\":\"synchronous\"},"
    "{\"name\":\"orders\",\"routes\":[\"POST /v1/orders\"],\"ttl\":\"1h\"}]}";

}  // namespace

class TestDurabilityHealth : public QObject {
  Q_OBJECT

 private slots:
  void aTierRequiringSynchronousDurabilityOnAStoreWithoutStandby() {
    test::TestDatabase db("ep_durability");
    const std::string policyPath = "/tmp/idem-ep-durability-policy-" + std::to_string(getpid()) + ".json";
    std::ofstream(policyPath) << kPolicy;
    auto removePolicy = qScopeGuard([&] { std::remove(policyPath.c_str()); });
    test::ServeProcess serve({"--db", db.conninfo(), "--policy", policyPath});
    client::Client c("127.0.0.1", serve.port(), std::chrono::seconds(10));

    auto refused = c.post("/v1/payments", {{"Content-Type", "application/json"}, {"Idempotency-Key", "k-1"}},
                          test::kPayment);
    QCOMPARE(refused.status, 503);
    const json problem = json::parse(refused.body);
    QVERIFY2(problem.at("type").get<std::string>() == "https://d/i#durability-too-weak", refused.body.c_str());
    QVERIFY2(problem.at("detail").get<std::string>().find("no standby") != std::string::npos, refused.body.c_str());
    auto order = c.post("/v1/orders", {{"Content-Type", "application/json"}, {"Idempotency-Key", "k-2"}},
                        R"({"item":"sku_1","quantity":1})");
    QVERIFY2(order.status == 201, order.body.c_str());
    auto keys = db.connect().exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key = 'k-1'");
    QCOMPARE(keys.integer(0, "n"), 0LL);

    auto health = c.get("/healthz");
    QCOMPARE(health.status, 200);  // the endpoint runs; the refused tier is a warning, not an outage
    const json h = json::parse(health.body);
    QCOMPARE(h.at("durability").at("level").get<std::string>(), std::string("local"));
    QCOMPARE(h.at("durability").at("synchronous").get<bool>(), false);
    QCOMPARE(h.at("durability").at("standbys").get<int>(), 0);
    QCOMPARE(h.at("durability").at("tiers").size(), std::size_t(1));
    QCOMPARE(h.at("durability").at("tiers").at(0).at("tier").get<std::string>(), std::string("payments"));
    QCOMPARE(h.at("durability").at("tiers").at(0).at("refused").get<long long>(), 1LL);
    QCOMPARE(h.at("warnings").size(), std::size_t(1));
    QVERIFY2(h.at("warnings").at(0).get<std::string>().find("tier payments requires synchronous durability") !=
                 std::string::npos,
             health.body.c_str());

    auto metrics = c.get("/metrics");
    QCOMPARE(metrics.status, 200);
    QVERIFY(metrics.body.find("idem_store_durability_synchronous 0\n") != std::string::npos);
    QVERIFY(metrics.body.find("idem_tier_durability_met{tier=\"payments\"} 0\n") != std::string::npos);
    QVERIFY(metrics.body.find("idem_durability_refused_total{tier=\"payments\"} 1\n") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestDurabilityHealth)
#include "tst_durabilityhealth.moc"
