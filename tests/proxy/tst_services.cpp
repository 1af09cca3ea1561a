// Two services on one store (issue 31, item 3): two `idemctl proxy` processes with --service,
// each in front of its own sample service, share one database. The same route, tenant and key
// sent to each execute once in each service and replay each its own answer; each keeps its own
// policy's tiers (`idemctl tiers --service`); each names itself on /healthz and /idempotency.
#include <QtTest>

#include <set>

#include <nlohmann/json.hpp>

#include "tests/proxy/proxy_support.h"

using namespace idem;
using test::charge;
using test::kCharge;

namespace {

// Beta's policy names other tiers than alpha's (kProxyPolicy): the tiers a second service
// brings must not replace the first's.
// A plain literal: moc does not read raw strings, and would take the URL's "//" for a comment.
const std::string kBetaPolicy =
    "{ \"docs_url\": \"https://docs.test/beta\", \"tiers\": [ { \"name\": \"beta-charges\", "
    "\"routes\": [\"POST /v1/charges\"], \"ttl\": \"2h\", \"lease\": \"5s\" } ] }";

/// A second sample service and a second proxy, with --service beta, on the rig's database.
struct SecondService {
  explicit SecondService(const test::ProxyRig& rig)
      : upstream((rig.dir / "ledger_beta.txt").string()) {
    std::ofstream(rig.dir / "policy_beta.json") << kBetaPolicy;
    proxy = std::make_unique<test::ServeProcess>(
        test::withTenantSource({"--db", rig.db.conninfo(), "--policy", (rig.dir / "policy_beta.json").string(),
                                "--upstream", upstream.url(), "--listen", "127.0.0.1:0", "--service", "beta"}),
        (rig.dir / "proxy_beta.err").string(), "proxy");
  }
  [[nodiscard]] std::unique_ptr<client::Client> client() const {
    return std::make_unique<client::Client>("127.0.0.1", proxy->port());
  }
  test::UpstreamApp upstream;
  std::unique_ptr<test::ServeProcess> proxy;
};

}  // namespace

class TestServices : public QObject {
  Q_OBJECT

 private slots:
  void theSameKeyExecutesOnceInEachServiceAndNeverCrosses() {
    test::ProxyRig rig("px_services_keys", {"--service", "alpha"});
    SecondService beta(rig);
    auto toAlpha = rig.client();
    auto toBeta = beta.client();

    const auto alphaFirst = toAlpha->post("/v1/charges", charge("svc-1"), kCharge);
    QCOMPARE(alphaFirst.status, 201);
    // The same route, tenant, key and payload to the other service: its own execution.
    const auto betaFirst = toBeta->post("/v1/charges", charge("svc-1"), kCharge);
    QCOMPARE(betaFirst.status, 201);
    QVERIFY2(betaFirst.header("Idempotent-Replayed").empty(), betaFirst.body.c_str());
    QVERIFY(betaFirst.body != alphaFirst.body);  // each sample service names its own charge

    // Retries replay each service's own answer.
    for (int i = 0; i < 3; ++i) {
      const auto alphaAgain = toAlpha->post("/v1/charges", charge("svc-1"), kCharge);
      QCOMPARE(alphaAgain.header("Idempotent-Replayed"), std::string("true"));
      QCOMPARE(alphaAgain.body, alphaFirst.body);
      const auto betaAgain = toBeta->post("/v1/charges", charge("svc-1"), kCharge);
      QCOMPARE(betaAgain.header("Idempotent-Replayed"), std::string("true"));
      QCOMPARE(betaAgain.body, betaFirst.body);
    }
    QCOMPARE(rig.upstream.executions("svc-1"), 1);
    QCOMPARE(beta.upstream.executions("svc-1"), 1);

    // explain finds the key in both services and asks which; --service picks one.
    std::string out;
    QCOMPARE(test::runIdemctl({"explain", "--db", rig.db.conninfo(), "--key", "svc-1"}, &out), 2);
    QVERIFY2(out.find("--service") != std::string::npos && out.find("service beta:") != std::string::npos,
             out.c_str());
    QCOMPARE(test::runIdemctl({"explain", "--db", rig.db.conninfo(), "--key", "svc-1", "--service", "beta"}, &out), 0);
    QVERIFY2(out.find("Service:     beta") != std::string::npos, out.c_str());
    QVERIFY2(out.find("Executions:  1") != std::string::npos, out.c_str());

    auto c = rig.db.connect();
    auto rows = c.exec("SELECT service, tier FROM idem.keys WHERE idem_key = 'svc-1' ORDER BY service");
    QCOMPARE(rows.rows(), 2);
    QCOMPARE(rows.str(0, "service"), std::string("alpha"));
    QCOMPARE(rows.str(0, "tier"), std::string("charges"));
    QCOMPARE(rows.str(1, "service"), std::string("beta"));
    QCOMPARE(rows.str(1, "tier"), std::string("beta-charges"));
  }

  void eachServiceKeepsItsTiersAndNamesItself() {
    test::ProxyRig rig("px_services_tiers", {"--service", "alpha"});
    SecondService beta(rig);

    std::string out;
    QCOMPARE(test::runIdemctl({"tiers", "--db", rig.db.conninfo(), "--service", "alpha", "--format", "json"}, &out), 0);
    auto alpha = nlohmann::json::parse(out.substr(out.find('{')));
    QCOMPARE(alpha["service"].get<std::string>(), std::string("alpha"));
    std::set<std::string> alphaTiers;
    for (const auto& t : alpha["tiers"]) alphaTiers.insert(t["name"].get<std::string>());
    QVERIFY(alphaTiers.count("charges") && alphaTiers.count("short") && !alphaTiers.count("beta-charges"));

    QCOMPARE(test::runIdemctl({"tiers", "--db", rig.db.conninfo(), "--service", "beta"}, &out), 0);
    QVERIFY2(out.find("Retention tiers of service beta") != std::string::npos, out.c_str());
    QVERIFY2(out.find("beta-charges") != std::string::npos, out.c_str());
    QVERIFY2(out.find("renewals") == std::string::npos, out.c_str());
    // Without --service: one report per service, the first service's tiers still there.
    QCOMPARE(test::runIdemctl({"tiers", "--db", rig.db.conninfo()}, &out), 0);
    QVERIFY2(out.find("Retention tiers of service alpha") != std::string::npos, out.c_str());
    QVERIFY2(out.find("Retention tiers of service beta") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"tiers", "--db", rig.db.conninfo(), "--service", "Beta!"}, &out), 2);
    QVERIFY2(out.find("--service") != std::string::npos, out.c_str());

    // Each proxy says which service it is, on its admin /healthz and on /idempotency.
    client::Client alphaAdmin("127.0.0.1", rig.adminPort());
    const auto health = nlohmann::json::parse(alphaAdmin.get("/healthz").body);
    QCOMPARE(health["service"].get<std::string>(), std::string("alpha"));
    client::Client betaAdmin("127.0.0.1", test::adminPortOf(*beta.proxy));
    const auto published = nlohmann::json::parse(betaAdmin.get("/idempotency", {{"Accept", "application/json"}}).body);
    QCOMPARE(published["service"].get<std::string>(), std::string("beta"));
    QVERIFY2(beta.proxy->banner().find("service beta") != std::string::npos, beta.proxy->banner().c_str());

    // idemctl status lists both, each with its policy in force.
    QCOMPARE(test::runIdemctl({"status", "--db", rig.db.conninfo(), "--format", "json"}, &out), 0);
    const auto status = nlohmann::json::parse(out.substr(out.find('{')));
    std::set<std::string> services;
    for (const auto& s : status["services"]) {
      services.insert(s["service"].get<std::string>());
      QVERIFY(s["policy_in_force"].get<int>() > 0);
    }
    QVERIFY(services == (std::set<std::string>{"alpha", "beta"}));
  }

  void aBadServiceNameIsRefusedAtStart() {
    test::TestDatabase db("px_services_bad", test::Schema::Store);
    const std::string policy = "/tmp/px_services_bad_" + std::to_string(getpid()) + ".json";
    std::ofstream(policy) << test::kProxyPolicy;
    std::string out;
    const int status = test::runIdemctl({"proxy", "--db", db.conninfo(), "--policy", policy, "--upstream",
                                         "http://127.0.0.1:9", "--service", "Orders API", "--single-tenant"},
                                        &out);
    std::remove(policy.c_str());
    QCOMPARE(status, 2);
    QVERIFY2(out.find("--service: \"Orders API\" has 'O' at position 1") != std::string::npos, out.c_str());
    // The same setting from the environment (IDEM_SERVICE) is read and refused alike.
    qputenv("IDEM_SERVICE", "orders/v1");
    std::ofstream(policy) << test::kProxyPolicy;
    const int fromEnvironment = test::runIdemctl({"proxy", "--db", db.conninfo(), "--policy", policy, "--upstream",
                                                  "http://127.0.0.1:9", "--single-tenant"},
                                                 &out);
    qunsetenv("IDEM_SERVICE");
    std::remove(policy.c_str());
    QCOMPARE(fromEnvironment, 2);
    QVERIFY2(out.find("--service: \"orders/v1\" has '/' at position 7") != std::string::npos, out.c_str());
  }
};

QTEST_GUILESS_MAIN(TestServices)
#include "tst_services.moc"
