// Presets held to the real libraries (issue 20): each tests/data/clients/<library>.json is a
// schedule measured by tests/clients/run.sh against the endpoint's fault profiles. The preset of
// the same name (with the settings the harness made, "policy_overrides") must reproduce every
// fault's attempts and every retry's min, median and max offset (core/measure/compare.h); and
// the policy `idemctl measure` fits from the same traffic must reproduce it too.
#include <QtTest>
#include <fstream>

#include "core/measure/compare.h"
#include "core/measure/fit.h"
#include "core/sim/config_parse.h"
#include "core/sim/engine.h"
#include "core/sim/presets.h"
#include "core/sim/schedule.h"
#include "tests/support/testdb.h"

using namespace idem;

namespace {

nlohmann::json load(const QString& path) {
  std::ifstream in(path.toStdString());
  return nlohmann::json::parse(in);
}

QStringList dataFiles() {
  const QDir dir(QStringLiteral(IDEM_TEST_DATA_DIR "/clients"));
  QStringList out;
  for (const auto& f : dir.entryList({QStringLiteral("*.json")}, QDir::Files)) out << dir.filePath(f);
  return out;
}

QString failures(const std::vector<measure::Check>& checks) {
  QString out;
  for (const auto& c : checks)
    if (!c.ok)
      out += QStringLiteral("\n  %1 retry %2 %3: measured %4, accepted %5..%6")
                 .arg(QString::fromStdString(c.profile))
                 .arg(c.retry)
                 .arg(QString::fromStdString(c.what))
                 .arg(c.measured, 0, 'f', 3)
                 .arg(c.low, 0, 'f', 3)
                 .arg(c.high, 0, 'f', 3);
  return out;
}

}  // namespace

class TestSimMeasured : public QObject {
  Q_OBJECT

 private slots:
  void data_present() {
    // Every library the issue names that can run here has stored data.
    for (const char* lib :
         {"stripe-node", "stripe-python", "aws-js-v3", "aws-js-v3-default", "aws-botocore", "urllib3", "got", "axios-retry"})
      QVERIFY2(QFile::exists(QStringLiteral(IDEM_TEST_DATA_DIR "/clients/%1.json").arg(lib)), lib);
  }

  void preset_matches_measurement_data() {
    QTest::addColumn<QString>("path");
    for (const auto& f : dataFiles()) QTest::newRow(qPrintable(QFileInfo(f).baseName())) << f;
  }
  void preset_matches_measurement() {
    QFETCH(QString, path);
    const auto doc = load(path);
    const std::string library = doc.at("library");
    QVERIFY2(sim::findPreset(library), ("no preset named " + library).c_str());
    QVERIFY(!doc.at("version").get<std::string>().empty());
    nlohmann::json policy = doc.value("policy_overrides", nlohmann::json::object());
    policy["preset"] = library;
    const auto config = sim::parseConfig({{"policy", policy}});
    const auto faults = measure::faultsFromJson(doc.at("measurement").at("faults"));
    QVERIFY(!faults.empty());
    const auto checks = measure::compareSchedule(config.policy, faults);
    QVERIFY(checks.size() >= faults.size());
    const QString bad = failures(checks);
    QVERIFY2(bad.isEmpty(), qPrintable(QStringLiteral("preset %1 vs %2 %3:%4")
                                           .arg(QString::fromStdString(library))
                                           .arg(QString::fromStdString(library))
                                           .arg(QString::fromStdString(doc.at("version")))
                                           .arg(bad)));
  }

  void fitted_policy_matches_measurement_data() { preset_matches_measurement_data(); }
  void fitted_policy_matches_measurement() {
    QFETCH(QString, path);
    const auto doc = load(path);
    const auto faults = measure::faultsFromJson(doc.at("measurement").at("faults"));
    std::vector<std::string> notes;
    const auto fitted = measure::fitPolicy(faults, notes);
    // It loads as a simulator policy, as `idemctl measure` prints it.
    const auto reparsed = sim::parseConfig({{"policy", sim::policyToJson(fitted)}});
    const QString bad = failures(measure::compareSchedule(reparsed.policy, faults));
    QVERIFY2(bad.isEmpty(), qPrintable(QStringLiteral("fit of %1: %2 %3")
                                           .arg(QFileInfo(path).baseName(),
                                                QString::fromStdString(sim::policyToJson(fitted).dump()), bad)));
  }

  // The readings the presets had before this measurement, held to the libraries they were
  // meant for: the old "stripe" (stripe-python's source) against stripe-node, the old
  // "aws-standard" (botocore's) against the AWS SDK for JavaScript v3. Both miss; the misses
  // are printed (the report's figures).
  void old_readings_miss_the_libraries_data() {
    QTest::addColumn<QString>("old");
    QTest::addColumn<QString>("library");
    QTest::newRow("stripe vs stripe-node") << "stripe"
                                           << "stripe-node";
    QTest::newRow("aws-standard vs aws-js-v3") << "aws-standard"
                                               << "aws-js-v3";
  }
  void old_readings_miss_the_libraries() {
    QFETCH(QString, old);
    QFETCH(QString, library);
    const auto doc = load(QStringLiteral(IDEM_TEST_DATA_DIR "/clients/%1.json").arg(library));
    nlohmann::json policy = doc.value("policy_overrides", nlohmann::json::object());
    policy["preset"] = old.toStdString();
    const auto config = sim::parseConfig({{"policy", policy}});
    const QString bad =
        failures(measure::compareSchedule(config.policy, measure::faultsFromJson(doc.at("measurement").at("faults"))));
    qInfo("%s vs %s:%s", qPrintable(old), qPrintable(library), qPrintable(bad));
    QVERIFY(!bad.isEmpty());
  }

  // The comparison can fail: the old "stripe" reading (equal jitter from 0.5 s, Retry-After
  // obeyed) does not reproduce stripe-node's measured schedule.
  void comparison_rejects_a_wrong_policy() {
    const auto doc = load(QStringLiteral(IDEM_TEST_DATA_DIR "/clients/stripe-node.json"));
    const auto faults = measure::faultsFromJson(doc.at("measurement").at("faults"));
    sim::Policy wrong = sim::findPreset("stripe-node")->policy;
    wrong.base *= 3;
    QVERIFY(!failures(measure::compareSchedule(wrong, faults)).isEmpty());
  }

  // Issue 20 item 4: the AWS retry quota belongs to one client object. Thirty operations failing
  // together on one client get fewer retries than on thirty clients.
  void shared_budget_is_per_client_object() {
    sim::Policy p = sim::findPreset("aws-js-v3")->policy;
    QCOMPARE(p.budget.retryCost, 14.0);  // @smithy/core Retry.cost() in the measured release
    const auto fault = *sim::parseFaultSpec("500");
    // A full quota (500 tokens): one client lets 500 / 14 = 35 retries through, where thirty
    // clients would make all 30 * 3 = 90.
    const auto shared = sim::retriesUnderSharedBudget(p, fault, 30, 1);
    const auto separate = sim::retriesUnderSharedBudget(p, fault, 30, 30);
    QCOMPARE(shared, std::int64_t{35});
    QCOMPARE(separate, std::int64_t{30 * (p.maxAttempts - 1)});
    // botocore's cheaper retries (cost 5): thirty operations' 60 retries fit in one quota, 150
    // operations' 300 do not (500 / 5 = 100).
    const sim::Policy boto = sim::findPreset("aws-botocore")->policy;
    QCOMPARE(sim::retriesUnderSharedBudget(boto, fault, 30, 1), std::int64_t{30 * (boto.maxAttempts - 1)});
    QCOMPARE(sim::retriesUnderSharedBudget(boto, fault, 150, 1), std::int64_t{100});  // 500 / 5
  }

  // The CLI view of the same: `idemctl simulate --schedule` prints stripe-node's measured
  // 0.5 s / 1.0 s offsets at Retry-After 2 s, and refuses an unknown profile.
  void cli_schedule() {
    QTemporaryFile config;
    QVERIFY(config.open());
    config.write(R"({"policy": {"preset": "stripe-node"}})");
    config.close();
    std::string out;
    QCOMPARE(test::runIdemctl(
                 {"simulate", "--config", config.fileName().toStdString(), "--schedule", "503-retry-after-2"}, &out),
             0);
    QVERIFY2(out.find("retry 1 (1000): offset s min/p50/max 0.502 / 0.502 / 0.502") != std::string::npos, out.c_str());
    QVERIFY2(out.find("retry 2 (1000): offset s min/p50/max 1.004 / 1.004 / 1.004") != std::string::npos, out.c_str());
    QCOMPARE(test::runIdemctl({"simulate", "--config", config.fileName().toStdString(), "--schedule", "418-ish"}, &out),
             2);
  }

  // The same in the engine: a population on one client runs its quota dry; on one client each
  // every operation makes all its retries.
  void engine_budget_per_client_object() {
    const auto run = [](int clientObjects) {
      auto c = sim::parseConfig(nlohmann::json::parse(R"({
        "clients": {"operations": 300, "arrival_rate_per_s": 1000},
        "policy": {"preset": "aws-js-v3"},
        "server": {"failure_rate": 1, "failure_status": 503}})"));
      c.clients.clientObjects = clientObjects;
      return sim::simulate(c);
    };
    const auto shared = run(1);
    const auto separate = run(300);
    QVERIFY(shared.failures.budget > 0);
    QCOMPARE(separate.failures.budget, std::int64_t{0});
    QCOMPARE(separate.attempts, std::int64_t{300 * 4});
    // No success ever refunds the shared quota: 500 tokens at 14 a retry.
    QCOMPARE(shared.attempts - shared.operations, std::int64_t{35});
    // The setting is part of the config's reported form.
    auto c = sim::parseConfig(nlohmann::json::parse(R"({"clients": {"client_objects": 30}})"));
    QCOMPARE(sim::configToJson(c)["clients"]["client_objects"].get<int>(), 30);
  }
};

QTEST_APPLESS_MAIN(TestSimMeasured)
#include "tst_sim_measured.moc"
