// idemctl simulate: the CLI prints the library's numbers, and bad input exits 2 naming the field.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "core/sim/config_parse.h"
#include "core/sim/engine.h"
#include "core/sim/presets.h"
#include "core/sim/report.h"
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
    QCOMPARE(test::runIdemctl({"simulate", "--config", path}, &out), 0);
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
    QCOMPARE(test::runIdemctl({"simulate", "--config", path, "--seed", "9"}, &out), 0);
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

  void listPresets() {
    std::string out;
    QCOMPARE(test::runIdemctl({"simulate", "--list-presets"}, &out), 0);
    for (const auto& p : sim::presets()) QVERIFY2(out.find(std::string(p.name)) != std::string::npos, out.c_str());
  }
};

QTEST_GUILESS_MAIN(TestSimCli)
#include "tst_sim_cli.moc"
