// idemctl bench's contract, not its speed: a one-second run against a real database prints every
// figure the issue names, and each printed ratio is the quotient of the printed figures.
#include <QtTest>
#include <nlohmann/json.hpp>

#include "tests/support/testdb.h"

using namespace idem;

namespace {

double perSecond(const nlohmann::json& run, const char* contender, const char* what) {
  return run.at(contender).at(what).get<double>();
}

void checkRatio(const nlohmann::json& ratios, const char* name, double expected) {
  QVERIFY2(ratios.contains(name), name);
  QVERIFY2(std::abs(ratios.at(name).get<double>() - expected) <= 1e-9 * expected, name);
}

}  // namespace

class TestBenchCli : public QObject {
  Q_OBJECT

 private slots:
  void jsonCarriesEveryFigureAndRatio() {
    test::TestDatabase db("bench_cli");
    std::string out;
    const int rc = test::runIdemctl({"bench", "--db", db.conninfo(), "--seconds", "1", "--format", "json"}, &out);
    QVERIFY2(rc == 0, out.c_str());
    const auto report = nlohmann::json::parse(out.substr(out.find('{')));

    const auto& runs = report.at("runs");
    QCOMPARE(runs.size(), std::size_t{2});
    QCOMPARE(runs[0].at("clients").get<int>(), 1);
    QCOMPARE(runs[1].at("clients").get<int>(), 8);
    for (const auto& run : runs) {
      for (const char* contender : {"library", "pgbench_minimal", "pgbench_seed", "pgbench_minimal_prepared",
                                    "pgbench_seed_prepared", "pgbench_idem_sql_prepared"}) {
        QVERIFY2(perSecond(run, contender, "new_per_s") > 0, contender);
        QVERIFY2(perSecond(run, contender, "replay_per_s") > 0, contender);
      }
      QVERIFY(perSecond(run, "library_trace_off", "replay_per_s") > 0);
      QVERIFY(perSecond(run, "library_unseen_keys", "replay_per_s") > 0);
      checkRatio(run.at("ratios"), "replay_unseen_vs_minimal",
                 perSecond(run, "library_unseen_keys", "replay_per_s") /
                     perSecond(run, "pgbench_minimal", "replay_per_s"));
      QVERIFY(perSecond(run, "one_key_storm", "library_replay_per_s") > 0);

      const double libNew = perSecond(run, "library", "new_per_s");
      const double libReplay = perSecond(run, "library", "replay_per_s");
      const auto& ratios = run.at("ratios");
      checkRatio(ratios, "new_vs_minimal", libNew / perSecond(run, "pgbench_minimal", "new_per_s"));
      checkRatio(ratios, "replay_vs_minimal", libReplay / perSecond(run, "pgbench_minimal", "replay_per_s"));
      checkRatio(ratios, "replay_vs_seed", libReplay / perSecond(run, "pgbench_seed", "replay_per_s"));
      const auto& prepared = run.at("ratios_prepared");
      checkRatio(prepared, "new_vs_minimal", libNew / perSecond(run, "pgbench_minimal_prepared", "new_per_s"));
      checkRatio(prepared, "replay_vs_minimal",
                 libReplay / perSecond(run, "pgbench_minimal_prepared", "replay_per_s"));
      checkRatio(prepared, "replay_vs_seed", libReplay / perSecond(run, "pgbench_seed_prepared", "replay_per_s"));
    }
    // The top-level ratios are the 8-client ones, the ones the target names.
    QCOMPARE(report.at("ratios").dump(), runs[1].at("ratios").dump());
    QCOMPARE(report.at("ratios_prepared").dump(), runs[1].at("ratios_prepared").dump());
  }

  void badArgumentsExitTwoAndSayWhich() {
    for (const auto& [option, value] : std::vector<std::pair<std::string, std::string>>{
             {"--format", "yaml"}, {"--seconds", "0"}, {"--seconds", "soon"}, {"--profile", "everything"}}) {
      std::string out;
      const int rc = test::runIdemctl({"bench", option, value}, &out);
      QVERIFY2(rc == 2, (option + " " + value + ": " + out).c_str());
      QVERIFY2(out.find(option.substr(2)) != std::string::npos, out.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestBenchCli)
#include "tst_bench_cli.moc"
