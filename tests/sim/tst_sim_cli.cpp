// idemctl simulate: the CLI prints the library's numbers, and bad input exits 2 naming the field.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <sstream>

#include "core/sim/config_parse.h"
#include "core/sim/engine.h"
#include "core/sim/presets.h"
#include "core/sim/report.h"
#include "core/sim/scenarios.h"
#include "core/sim/verdict.h"
#include "tests/support/testdb.h"

using namespace idem;

namespace {
constexpr const char* kConfig = R"({ "seed": 7,
  "clients": { "operations": 5000, "arrival_rate_per_s": 200 },
  "policy": { "preset": "stripe", "timeout": "2s", "retry_on": ["timeout", "5xx", "409"] },
  "server": { "latency": { "median": "300ms", "p99": "4s" }, "failure_rate": 0.05, "capacity_rps": 400,
              "events": [ { "at": "5s", "duration": "3s", "extra_rate_per_s": 300 },
                          { "at": "12s", "duration": "2s", "outage": true, "retry_after": "3s" } ] },
  "store": { "ttl": "30m", "purge_lag": "0s", "stored_at": "first_receipt" } })";
}  // namespace

class TestSimCli : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;

  std::string writeFile(const std::string& name, const std::string& text) {
    const std::string path = m_dir.filePath(QString::fromStdString(name)).toStdString();
    std::ofstream(path) << text;
    return path;
  }

 private slots:
  void jsonMatchesLibrary() {
    const std::string path = writeFile("storm.json", kConfig);
    std::string out;
    QCOMPARE(test::runIdemctl({"simulate", "--config", path, "--format", "json"}, &out), 0);
    const auto cli = nlohmann::ordered_json::parse(out);
    for (const char* field : {"operations", "attempts", "amplification", "success_rate", "conflicts_409", "timeouts",
                              "budget_exhausted", "duplicates", "duplicates_per_million", "horizon_s", "ttl_s",
                              "attempt_offsets", "series", "recovery", "config"})
      QVERIFY2(cli.contains(field), field);
    for (const char* column : {"t_s", "offered", "attempts", "successes", "retries", "timeouts", "in_flight"})
      QVERIFY2(cli["series"].contains(column), column);

    const auto lib = sim::toJson(sim::simulate(sim::parseConfigText(kConfig)));
    QCOMPARE(cli["operations"].get<std::int64_t>(), lib["operations"].get<std::int64_t>());
    QCOMPARE(cli["attempts"].get<std::int64_t>(), lib["attempts"].get<std::int64_t>());
    QCOMPARE(cli["amplification"].get<double>(), lib["amplification"].get<double>());
    QCOMPARE(cli["success_rate"].get<double>(), lib["success_rate"].get<double>());
    QCOMPARE(cli["duplicates"].get<std::int64_t>(), lib["duplicates"].get<std::int64_t>());
    QCOMPARE(cli["horizon_s"].dump(), lib["horizon_s"].dump());
    QCOMPARE(cli.dump(), lib.dump());  // and everything else, series included
    QVERIFY(cli["attempts"].get<std::int64_t>() > cli["operations"].get<std::int64_t>());
    QCOMPARE(cli["config"]["policy"]["preset"].get<std::string>(), std::string("stripe"));
  }

  void seedOverride() {
    const std::string path = writeFile("seed.json", kConfig);
    std::string out;
    QCOMPARE(test::runIdemctl({"simulate", "--config", path, "--seed", "9", "--format", "json"}, &out), 0);
    auto config = sim::parseConfigText(kConfig);
    config.seed = 9;
    QCOMPARE(nlohmann::ordered_json::parse(out).dump(), sim::toJson(sim::simulate(config)).dump());
  }

  void textFormat() {
    const std::string path = writeFile("text.json", kConfig);
    std::string out;
    QCOMPARE(test::runIdemctl({"simulate", "--config", path, "--format", "text"}, &out), 0);
    QVERIFY2(out.find("amplification") != std::string::npos, out.c_str());
    QVERIFY(out.find("retry horizon H") != std::string::npos);
    QVERIFY(out.find("preset stripe") != std::string::npos);
  }

  void badInputExits2_data() {
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("expected");
    QTest::newRow("field") << R"({"policy": {"max_attempts": 0}})"
                           << "policy.max_attempts";
    QTest::newRow("unknown field") << R"({"server": {"capacity": 10}})"
                                   << "server.capacity";
    QTest::newRow("syntax") << "{ nope"
                            << "not valid JSON";
  }
  void badInputExits2() {
    QFETCH(QString, config);
    QFETCH(QString, expected);
    const std::string path = writeFile("bad.json", config.toStdString());
    std::string out;
    QCOMPARE(test::runIdemctl({"simulate", "--config", path}, &out), 2);
    QVERIFY2(out.find(expected.toStdString()) != std::string::npos, out.c_str());
  }

  void usageErrors() {
    std::string out;
    QCOMPARE(test::runIdemctl({"simulate"}, &out), 2);
    QCOMPARE(test::runIdemctl({"simulate", "--config", m_dir.filePath("missing.json").toStdString()}, &out), 2);
    QVERIFY(out.find("cannot read") != std::string::npos);
    const std::string path = writeFile("ok.json", kConfig);
    QCOMPARE(test::runIdemctl({"simulate", "--config", path, "--format", "yaml"}, &out), 2);
    QCOMPARE(test::runIdemctl({"simulate", "--config", path, "--seed", "-3"}, &out), 2);
  }

  // Issue 29, item 7: the answer comes first. Without --format the CLI prints text whose first
  // line is the verdict the console shows, and no row per attempt unless --attempts.
  void textByDefaultLeadsWithTheVerdict() {
    const std::string path = writeFile("default.json", kConfig);
    std::string out;
    QCOMPARE(test::runIdemctl({"simulate", "--config", path}, &out), 0);
    const auto result = sim::simulate(sim::parseConfigText(kConfig));
    const std::string first = out.substr(0, out.find('\n'));
    QCOMPARE(first, sim::policyLabel(result.config.policy) + ": " + sim::verdictLine(result));
    QVERIFY2(first.rfind("stripe-python: ", 0) == 0, first.c_str());  // the preset's name, not its old alias
    QVERIFY2(out.find("p50") == std::string::npos, out.c_str());    // no attempt table
    QVERIFY2(out.find("--attempts lists them") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"simulate", "--config", path, "--attempts"}, &out), 0);
    QVERIFY2(out.find("attempt offsets after the first attempt") != std::string::npos, out.c_str());
    // One row per attempt number: lines of the table that start with that number.
    std::size_t rows = 0;
    std::stringstream lines(out.substr(out.find("attempt offsets after")));
    for (std::string line; std::getline(lines, line);) {
      std::stringstream words(line);
      int attempt = 0;
      if (words >> attempt && attempt >= 2) ++rows;
    }
    QVERIFY(!result.offsets.empty());
    QCOMPARE(rows, result.offsets.size());
  }

  // Two or more policies on one scenario, side by side, without editing the file: repeated
  // --policy and a comma list both work; each column is the library's run of that policy.
  void policiesComparedSideBySide() {
    const std::string path = writeFile("compare.json", kConfig);
    std::string policyFile = writeFile("mine.json", R"({ "policy": { "max_attempts": 2, "backoff": "constant", "base": "1s" } })");
    std::string out;
    QCOMPARE(test::runIdemctl({"simulate", "--config", path, "--policy", "stripe-node", "--policy", "urllib3," + policyFile},
                              &out),
             0);
    std::vector<std::string> names{"stripe-node", "urllib3", "mine"};
    for (const auto& name : names) QVERIFY2(out.find(name + ": ") != std::string::npos, out.c_str());
    QVERIFY2(out.find("  verdict ") != std::string::npos && out.find("  duplicates ") != std::string::npos, out.c_str());
    // The table's header row names the three policies in order on one line.
    const auto header = out.find("stripe-node   ");
    QVERIFY2(header != std::string::npos, out.c_str());
    const std::string headerLine = out.substr(header, out.find('\n', header) - header);
    QVERIFY2(headerLine.find("urllib3") != std::string::npos && headerLine.find("mine") != std::string::npos,
             headerLine.c_str());
    QCOMPARE(test::runIdemctl({"simulate", "--config", path, "--policy", "stripe-node,urllib3", "--format", "json"}, &out),
             0);
    const auto j = nlohmann::ordered_json::parse(out);
    QCOMPARE(j["runs"].size(), std::size_t(2));
    auto config = sim::parseConfigText(kConfig);
    config.policy = sim::parseConfig(nlohmann::json{{"policy", {{"preset", "urllib3"}}}}).policy;
    QCOMPARE(j["runs"][1]["name"].get<std::string>(), std::string("urllib3"));
    QCOMPARE(j["runs"][1]["result"].dump(), sim::toJson(sim::simulate(config)).dump());
    // A name that is neither a preset nor a file is an error that lists the presets.
    QCOMPARE(test::runIdemctl({"simulate", "--config", path, "--policy", "stripe-nod"}, &out), 2);
    QVERIFY2(out.find("neither a preset") != std::string::npos && out.find("urllib3") != std::string::npos,
             out.c_str());
  }

  // A built-in scenario by the name the console shows, compared A against B as the console does.
  void builtInScenarioByName() {
    std::string out;
    QCOMPARE(test::runIdemctl({"simulate", "--list-scenarios"}, &out), 0);
    for (const auto& s : sim::builtInScenarios()) {
      QVERIFY2(out.find(std::string(s.id) + "  " + std::string(s.title)) != std::string::npos, out.c_str());
      QVERIFY(std::string(s.title).find("issue") == std::string::npos);  // a title for users, not a ticket
    }
    QCOMPARE(test::runIdemctl({"simulate", "--scenario", "charge-twice"}, &out), 0);
    QVERIFY2(out.rfind("Scenario: Which one charges twice? (30 min TTL)\n", 0) == 0, out.c_str());
    const auto* s = sim::findScenario("charge-twice");
    auto config = sim::scenarioConfig(*s);
    config.policy = sim::scenarioPolicyB(*s);
    QVERIFY2(out.find("B urllib3: " + sim::verdictLine(sim::simulate(config))) != std::string::npos, out.c_str());
    QVERIFY2(out.find("A stripe-python: cannot charge twice") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"simulate", "--scenario", "nope"}, &out), 2);
    QVERIFY(out.find("charge-twice") != std::string::npos);
  }

  // --tiers: the scenario's clients against each tier of an Idem policy; each row is the
  // library's run of the scenario with that tier's TTL, lease and cross_key, and the counterpart
  // switches detection the other way.
  void eachTierOfAPolicy() {
    const std::string policy = writeFile("tiers.json", R"({ "docs_url": "/idempotency", "tiers": [
      { "name": "payments", "routes": ["POST /v1/payments"], "ttl": "24h", "cross_key": { "mode": "hold", "window": "10m" } },
      { "name": "orders", "routes": ["POST /v1/orders"], "ttl": "1h", "lease": "20s" } ] })");
    std::string out;
    QCOMPARE(test::runIdemctl({"simulate", "--scenario", "new-keys", "--tiers", policy, "--format", "json"}, &out), 0);
    const auto tiers = nlohmann::json::parse(out)["tiers"];
    QCOMPARE(tiers.size(), std::size_t(2));
    const auto* s = sim::findScenario("new-keys");
    auto config = sim::scenarioConfig(*s);
    auto payments = config;
    payments.store.ttl = 24LL * 3600 * sim::kUsecPerSecond;
    payments.store.lease = 30 * sim::kUsecPerSecond;
    payments.store.crossKey = {sim::CrossKey::Mode::Hold, 600 * sim::kUsecPerSecond};
    const auto held = sim::simulate(payments);
    QCOMPARE(tiers[0]["tier"].get<std::string>(), std::string("payments"));
    QCOMPARE(tiers[0]["duplicates"].get<std::int64_t>(), held.duplicates);
    QCOMPARE(tiers[0]["counterpart"]["duplicates"].get<std::int64_t>(), held.counterpart->duplicates);
    auto orders = config;
    orders.store.ttl = 3600 * sim::kUsecPerSecond;
    orders.store.lease = 20 * sim::kUsecPerSecond;
    orders.store.crossKey.mode = sim::CrossKey::Mode::Off;
    QCOMPARE(tiers[1]["duplicates"].get<std::int64_t>(), sim::simulate(orders).duplicates);
    // The scenario's clients make new keys for retries: detection is what tells the two apart.
    QVERIFY(tiers[1]["duplicates_new_key"].get<std::int64_t>() > 0);
    QCOMPARE(tiers[0]["duplicates_new_key"].get<std::int64_t>(), 0LL);

    QCOMPARE(test::runIdemctl({"simulate", "--scenario", "new-keys", "--tiers", policy}, &out), 0);
    QVERIFY2(out.find("hold 10m") != std::string::npos, out.c_str());
    const std::string broken = writeFile("broken.json", R"({ "tiers": [ { "name": "x" } ] })");
    QCOMPARE(test::runIdemctl({"simulate", "--scenario", "new-keys", "--tiers", broken}, &out), 2);
    QVERIFY2(out.find("docs_url") != std::string::npos, out.c_str());
  }

  void listPresets() {
    std::string out;
    QCOMPARE(test::runIdemctl({"simulate", "--list-presets"}, &out), 0);
    for (const auto& p : sim::presets()) QVERIFY2(out.find(std::string(p.name)) != std::string::npos, out.c_str());
  }
};

QTEST_GUILESS_MAIN(TestSimCli)
#include "tst_sim_cli.moc"
