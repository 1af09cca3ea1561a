// Simulator configs: the issue's example shape, presets with overrides, errors that name the
// field, and the resolved config written back in the same shape.
#include <QtTest>

#include "core/sim/config_parse.h"
#include "core/sim/scenarios.h"
#include "core/sim/engine.h"
#include "core/sim/presets.h"
#include "core/sim/report.h"

using namespace idem::sim;

namespace {
constexpr Usec sec(std::int64_t v) { return v * kUsecPerSecond; }

// The config shape of issue 6, verbatim.
constexpr const char* kIssueExample = R"({ "seed": 7,
  "clients": { "operations": 100000, "arrival_rate_per_s": 200 },
  "policy": { "max_attempts": 4, "timeout": "3s", "deadline": "60s",
              "backoff": "exponential", "jitter": "full", "base": "500ms",
              "multiplier": 2, "cap": "5s", "retry_on": ["timeout", "5xx", "409"],
              "retry_after_cap": "60s",
              "budget": { "type": "token_bucket", "max_tokens": 10, "ratio": 0.1 } },
  "server": { "latency": { "median": "100ms", "p99": "1s" }, "failure_rate": 0.01,
              "capacity_rps": 0,
              "events": [ { "at": "20s", "duration": "5s", "extra_rate_per_s": 40 } ] },
  "store": { "ttl": "30m", "purge_lag": "0s", "stored_at": "first_receipt" } })";
}  // namespace

class TestSimConfig : public QObject {
  Q_OBJECT

 private slots:
  void issueExample() {
    const SimConfig c = parseConfigText(kIssueExample);
    QCOMPARE(c.seed, std::uint64_t{7});
    QCOMPARE(c.clients.operations, std::int64_t{100000});
    QCOMPARE(c.clients.arrivalRatePerSecond, 200.0);
    QCOMPARE(c.policy.maxAttempts, 4);
    QCOMPARE(c.policy.timeout, std::optional<Usec>(sec(3)));
    QCOMPARE(c.policy.deadline, std::optional<Usec>(sec(60)));
    QVERIFY(c.policy.backoff == Backoff::Exponential);
    QVERIFY(c.policy.jitter == Jitter::Full);
    QCOMPARE(c.policy.base, Usec{500'000});
    QCOMPARE(c.policy.cap, std::optional<Usec>(sec(5)));
    QCOMPARE(c.policy.retryOn, kTimeout | kStatus5xx | kConflict409);
    QCOMPARE(c.policy.retryAfterCap, std::optional<Usec>(sec(60)));
    QVERIFY(c.policy.budget.type == Budget::Type::TokenBucket);
    QVERIFY(c.policy.budget.style == Budget::Style::Grpc);
    QCOMPARE(c.policy.budget.maxTokens, 10.0);
    QCOMPARE(c.policy.budget.ratio, 0.1);
    QCOMPARE(c.server.latencyMedian, Usec{100'000});
    QCOMPARE(c.server.latencyP99, sec(1));
    QCOMPARE(c.server.failureRate, 0.01);
    QCOMPARE(c.server.capacityRps, 0.0);
    QCOMPARE(c.server.events.size(), std::size_t{1});
    QCOMPARE(c.server.events[0].at, sec(20));
    QCOMPARE(c.server.events[0].extraRatePerSecond, 40.0);
    QCOMPARE(c.store.ttl, sec(1800));
    QVERIFY(c.store.storedAt == Store::StoredAt::FirstReceipt);
  }

  void commentsAndNulls() {
    const SimConfig c = parseConfigText(R"({
      // a comment
      "policy": { "timeout": null, "deadline": null, "cap": null, "budget": null },
      "store": { "lease": null } })");
    QVERIFY(!c.policy.timeout);
    QVERIFY(!c.policy.deadline);
    QVERIFY(!c.policy.cap);
    QVERIFY(c.policy.budget.type == Budget::Type::None);
    QVERIFY(!c.store.lease);
  }

  // Every preset loads by name, equals its table entry, and runs.
  void presetsLoad_data() {
    QTest::addColumn<QString>("name");
    for (const auto& p : presets()) QTest::newRow(std::string(p.name).c_str()) << QString::fromUtf8(p.name.data());
  }
  void presetsLoad() {
    QFETCH(QString, name);
    nlohmann::json doc = nlohmann::json::parse(R"({"clients": {"operations": 2000, "arrival_rate_per_s": 500},
      "server": {"failure_rate": 0.05, "failure_status": 503, "connection_error_rate": 0.01}})");
    doc["policy"] = {{"preset", name.toStdString()}};
    const SimConfig c = parseConfig(doc);
    const Preset* preset = findPreset(name.toStdString());
    QVERIFY(preset);
    QCOMPARE(c.policy.preset, name.toStdString());
    QCOMPARE(policyToJson(c.policy).dump(), policyToJson(preset->policy).dump());
    QVERIFY(!preset->title.empty());
    QVERIFY(!preset->source.empty());
    QVERIFY(c.policy.maxAttempts >= 3);
    const Result r = simulate(c);
    QCOMPARE(r.operations, std::int64_t{2000});
    QVERIFY(r.amplification() > 1.0);  // every preset retries 503s or connection errors
    // Retrying helps: more succeed than the 0.95 * 0.99 a single attempt would get.
    QVERIFY2(r.successRate() > 0.98, qPrintable(QString::number(r.successRate())));
  }

  void presetValues() {
    // Spot checks of documented defaults (sources in core/sim/presets.cpp).
    const Policy stripe = findPreset("stripe")->policy;
    QCOMPARE(stripe.maxAttempts, 3);
    QCOMPARE(stripe.base, Usec{500'000});
    QCOMPARE(stripe.cap, std::optional<Usec>(sec(5)));
    QVERIFY(stripe.jitter == Jitter::Equal);
    QCOMPARE(stripe.retryAfterCap, std::optional<Usec>(sec(60)));
    const Policy aws = findPreset("aws-standard")->policy;
    QCOMPARE(aws.maxAttempts, 3);
    QCOMPARE(aws.cap, std::optional<Usec>(sec(20)));
    QVERIFY(aws.jitter == Jitter::Full);
    QCOMPARE(aws.budget.maxTokens, 500.0);
    QCOMPARE(aws.budget.retryCost, 5.0);
    QCOMPARE(aws.budget.timeoutCost, 10.0);
    const Policy grpc = findPreset("grpc")->policy;
    QCOMPARE(grpc.budget.maxTokens, 10.0);
    QCOMPARE(grpc.budget.ratio, 0.1);
    QCOMPARE(grpc.retryOn, kConnectionError | kStatus503);
    const Policy urllib3 = findPreset("urllib3")->policy;
    QCOMPARE(urllib3.maxAttempts, 4);
    QCOMPARE(urllib3.cap, std::optional<Usec>(sec(120)));
    QVERIFY(urllib3.retryAfter == RetryAfterMode::Replace);
    const Policy polly = findPreset("polly")->policy;
    QCOMPARE(polly.maxAttempts, 4);
    QVERIFY(polly.backoff == Backoff::Constant);
    QCOMPARE(polly.base, sec(2));
    QVERIFY(polly.jitter == Jitter::None);
  }

  void presetOverrides() {
    const SimConfig c =
        parseConfigText(R"({"policy": {"preset": "aws-standard", "max_attempts": 5, "budget": {"max_tokens": 50}}})");
    QCOMPARE(c.policy.maxAttempts, 5);
    QCOMPARE(c.policy.cap, std::optional<Usec>(sec(20)));  // kept from the preset
    QVERIFY(c.policy.budget.style == Budget::Style::Aws);  // refined, not replaced
    QCOMPARE(c.policy.budget.maxTokens, 50.0);
    QCOMPARE(c.policy.budget.retryCost, 5.0);
    const SimConfig none = parseConfigText(R"({"policy": {"preset": "grpc", "budget": null}})");
    QVERIFY(none.policy.budget.type == Budget::Type::None);
    const SimConfig ratio = parseConfigText(R"({"policy": {"preset": "grpc", "budget": {"type": "ratio"}}})");
    QVERIFY(ratio.policy.budget.type == Budget::Type::Ratio);
    QCOMPARE(ratio.policy.budget.ratio, 0.1);
  }

  void errorsNameTheField_data() {
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("field");
    QTest::newRow("not json") << "{ \"seed\": "
                              << "";
    QTest::newRow("not an object") << "[1, 2]"
                                   << "(top level)";
    QTest::newRow("unknown top field") << R"({"sed": 7})"
                                       << "sed";
    QTest::newRow("negative seed") << R"({"seed": -1})"
                                   << "seed";
    QTest::newRow("operations zero") << R"({"clients": {"operations": 0}})"
                                     << "clients.operations";
    QTest::newRow("rate as string") << R"({"clients": {"arrival_rate_per_s": "200"}})"
                                    << "clients.arrival_rate_per_s";
    QTest::newRow("max attempts") << R"({"policy": {"max_attempts": 0}})"
                                  << "policy.max_attempts";
    QTest::newRow("fractional attempts") << R"({"policy": {"max_attempts": 2.5}})"
                                         << "policy.max_attempts";
    QTest::newRow("bad duration") << R"({"policy": {"timeout": "3 seconds"}})"
                                  << "policy.timeout";
    QTest::newRow("zero timeout") << R"({"policy": {"timeout": "0s"}})"
                                  << "policy.timeout";
    QTest::newRow("duration as number") << R"({"policy": {"base": 500}})"
                                        << "policy.base";
    QTest::newRow("backoff") << R"({"policy": {"backoff": "fibonacci"}})"
                             << "policy.backoff";
    QTest::newRow("jitter") << R"({"policy": {"jitter": "fancy"}})"
                            << "policy.jitter";
    QTest::newRow("multiplier") << R"({"policy": {"multiplier": 0.5}})"
                                << "policy.multiplier";
    QTest::newRow("retry_on entry") << R"({"policy": {"retry_on": ["timeout", "418"]}})"
                                    << "policy.retry_on[1]";
    QTest::newRow("retry_on type") << R"({"policy": {"retry_on": "timeout"}})"
                                   << "policy.retry_on";
    QTest::newRow("unknown policy field") << R"({"policy": {"retries": 3}})"
                                          << "policy.retries";
    QTest::newRow("preset") << R"({"policy": {"preset": "curl"}})"
                            << "policy.preset";
    QTest::newRow("budget type") << R"({"policy": {"budget": {"type": "leaky"}}})"
                                 << "policy.budget.type";
    QTest::newRow("budget needs type") << R"({"policy": {"budget": {"max_tokens": 3}}})"
                                       << "policy.budget.type";
    QTest::newRow("budget tokens") << R"({"policy": {"budget": {"type": "token_bucket", "max_tokens": 0}}})"
                                   << "policy.budget.max_tokens";
    QTest::newRow("budget field of other style")
        << R"({"policy": {"budget": {"type": "token_bucket", "retry_cost": 5}}})"
        << "policy.budget.retry_cost";
    QTest::newRow("failure rate") << R"({"server": {"failure_rate": 1.5}})"
                                  << "server.failure_rate";
    QTest::newRow("failure status") << R"({"server": {"failure_status": 502}})"
                                    << "server.failure_status";
    QTest::newRow("p99 below median") << R"({"server": {"latency": {"median": "1s", "p99": "100ms"}}})"
                                      << "server.latency.p99";
    QTest::newRow("event without duration") << R"({"server": {"events": [{"at": "1s", "outage": true}]}})"
                                            << "server.events[0].duration";
    QTest::newRow("event doing nothing") << R"({"server": {"events": [{"at": "1s", "duration": "1s"}]}})"
                                         << "server.events[0]";
    QTest::newRow("outage status") << R"({"server": {"events": [{"at": "1s", "duration": "1s", "outage": true,
                                          "outage_status": 500}]}})"
                                   << "server.events[0].outage_status";
    QTest::newRow("capacity") << R"({"server": {"capacity_rps": -1}})"
                              << "server.capacity_rps";
    QTest::newRow("ttl") << R"({"store": {"ttl": "30 minutes"}})"
                         << "store.ttl";
    QTest::newRow("stored_at") << R"({"store": {"stored_at": "whenever"}})"
                               << "store.stored_at";
    // Found by tests/fuzz/fuzz_sim_config: valid JSON syntax the JSON library refuses with an
    // exception of another kind, which escaped parseConfigText.
    QTest::newRow("number beyond a double") << R"({"clients": {"operations": 1e400}})"
                                            << "";
  }
  void errorsNameTheField() {
    QFETCH(QString, config);
    QFETCH(QString, field);
    try {
      (void)parseConfigText(config.toStdString());
      QFAIL("accepted a bad config");
    } catch (const ConfigError& e) {
      QCOMPARE(QString::fromStdString(e.field()), field);
      if (!field.isEmpty()) QVERIFY(QString::fromUtf8(e.what()).startsWith(field + ": "));
    }
  }

  // The example configs in core/sim/examples parse and run.
  void examples_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("budget-spike") << "budget-spike.json";
    QTest::newRow("charge-twice") << "charge-twice.json";
    QTest::newRow("storm") << "storm.json";
    QTest::newRow("new-keys") << "new-keys.json";
  }
  void examples() {
    QFETCH(QString, file);
    QFile f(QStringLiteral(IDEM_SOURCE_DIR "/core/sim/examples/") + file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    SimConfig c = parseConfigText(f.readAll().toStdString());
    c.clients.operations = std::min<std::int64_t>(c.clients.operations, 3000);
    const Result r = simulate(c);
    QCOMPARE(r.operations >= 3000, true);
    QVERIFY(r.successes > 0);
  }

  // The built-in scenarios (console and --scenario) are the example files, field for field.
  void builtInScenariosAreTheExampleFiles() {
    for (const auto& s : builtInScenarios()) {
      QFile f(QStringLiteral(IDEM_SOURCE_DIR "/core/sim/examples/") + QString::fromUtf8(s.id.data(), qsizetype(s.id.size())) +
              QStringLiteral(".json"));
      QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName()));
      QCOMPARE(configToJson(parseConfigText(f.readAll().toStdString())).dump(),
               configToJson(scenarioConfig(s)).dump());
    }
  }

  // configToJson writes the resolved config in the input's shape: reading it back runs the
  // same simulation.
  void resolvedConfigRoundTrips() {
    SimConfig c = parseConfigText(kIssueExample);
    c.clients.operations = 3000;
    c.policy.budget.type = Budget::Type::Ratio;
    ServerEvent outage;
    outage.at = sec(5);
    outage.duration = sec(2);
    outage.outage = true;
    outage.outageFraction = 0.5;
    outage.retryAfter = sec(3);
    c.server.events.push_back(outage);
    const auto written = configToJson(c);
    const SimConfig back = parseConfig(nlohmann::json::parse(written.dump()));
    QCOMPARE(configToJson(back).dump(), written.dump());
    QCOMPARE(toJson(simulate(back)).dump(), toJson(simulate(c)).dump());
    const SimConfig preset = parseConfigText(R"({"policy": {"preset": "stripe"}})");
    QCOMPARE(configToJson(parseConfig(nlohmann::json::parse(configToJson(preset).dump()))).dump(),
             configToJson(preset).dump());
  }
};

QTEST_GUILESS_MAIN(TestSimConfig)
#include "tst_sim_config.moc"
