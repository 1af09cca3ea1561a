// idemctl bench's contract, not its speed: a one-second run against a real database prints every
// figure the issue names, and each printed ratio is the quotient of the printed figures.
#include <cmath>
#include <map>
#include <string_view>

#include <QtTest>
#include <nlohmann/json.hpp>

#include "tests/support/testdb.h"

using namespace idem;

namespace {

double perSecond(const nlohmann::json& run, const char* contender, const char* what) {
  return run.at(contender).at(what).get<double>();
}

/// "40 307" -> 40307; "0.97×" -> 0.97; markup (* and **) is ignored. NaN when it is neither.
double cellNumber(QString cell) {
  cell.remove('*').remove(QChar(0x00D7)).remove(' ');
  bool ok = false;
  const double v = cell.toDouble(&ok);
  return ok ? v : std::nan("");
}

/// The Markdown table's rows as cells, keyed by "<clients>|<label>" (the clients cell of a
/// block's first row carries on to the rows below it).
std::map<QString, QStringList> markdownRows(const std::string& text) {
  std::map<QString, QStringList> rows;
  QString clients;
  for (const QString& line : QString::fromStdString(text).split('\n')) {
    if (!line.startsWith("| ")) continue;
    QStringList cells = line.split('|');
    cells = cells.mid(1, cells.size() - 2);
    for (auto& c : cells) c = c.trimmed();
    if (!cells[0].isEmpty()) clients = cells[0];
    QString label = cells[1];
    label.remove('*');
    rows[clients + "|" + label] = cells;
  }
  return rows;
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

  // The table in docs/benchmarks.md is pasted from this output: it must hold what the text holds, grouped
  // for reading, with each ratio the quotient of the figures printed beside it.
  void markdownIsTheReadmesTable() {
    test::TestDatabase db("bench_cli_md");
    std::string out;
    const int rc =
        test::runIdemctl({"bench", "--db", db.conninfo(), "--seconds", "1", "--format", "markdown"}, &out);
    QVERIFY2(rc == 0, out.c_str());
    QVERIFY2(out.find("| clients | | new keys/s | replays/s |\n|---|---|---:|---:|\n") != std::string::npos, out.c_str());
    const auto rows = markdownRows(out);
    const QRegularExpression groupedFigure("^\\d{1,3}( \\d{3})*$");
    for (const QString clients : {"1", "8"}) {
      const auto cells = [&](const char* label) {
        const auto it = rows.find(clients + "|" + label);
        return it == rows.end() ? QStringList() : it->second;
      };
      const QStringList library = cells("library (Idem)");
      const QStringList minimal = cells("pgbench minimal SQL (default protocol)");
      const QStringList seed = cells("pgbench seed design (default protocol)");
      const QStringList headline = cells("library / minimal");
      QVERIFY2(library.size() == 4 && minimal.size() == 4 && seed.size() == 4 && headline.size() == 4, out.c_str());
      for (const QString& figure : {library[2], library[3], minimal[2], minimal[3]})
        QVERIFY2(groupedFigure.match(figure).hasMatch(), qPrintable(figure));
      QVERIFY2(headline[2].startsWith("**") && headline[2].endsWith("×**"), qPrintable(headline[2]));
      // Figures are rounded to whole requests and ratios to 0.01: allow for both.
      const auto near = [](double printed, double figureA, double figureB) {
        return std::abs(printed - figureA / figureB) <= 0.006 + 1.0 / figureB;
      };
      QVERIFY(near(cellNumber(headline[2]), cellNumber(library[2]), cellNumber(minimal[2])));
      QVERIFY(near(cellNumber(headline[3]), cellNumber(library[3]), cellNumber(minimal[3])));
      const QStringList versusSeed = cells("library / seed");
      QVERIFY2(versusSeed.size() == 4, out.c_str());
      QVERIFY(near(cellNumber(versusSeed[3]), cellNumber(library[3]), cellNumber(seed[3])));
      for (const char* label : {"pgbench minimal SQL, `-M prepared`", "pgbench seed design, `-M prepared`",
                                "library / minimal, prepared", "library, trace off",
                                "library, keys new to this process (a storm of them: read first once learned)",
                                "pgbench, Idem's SQL (prepared)",
                                "one hot key (retry storm): library vs pgbench minimal (default)"})
        QVERIFY2(!cells(label).isEmpty(), label);
    }
  }

  // --new-key-costs: each contender's per-key figures are its totals over the keys it made, and
  // each ratio the library's figure over pgbench's. The test cluster runs on this host, so the
  // server's CPU is read too.
  void newKeyCostsPrintPerKeyFiguresAndTheirRatios() {
    test::TestDatabase db("bench_cli_costs");
    const auto runs = costRuns(db, "--new-key-costs", "library", "pgbench_minimal_prepared");
    QCOMPARE(runs.size(), std::size_t{2});
  }

  // --cross-key-cost: the same table, a tier with cross_key hold beside it off. The hold side's
  // keys are the ones marked as their request's latest execution (migration 0027), the off
  // side's are not: each side measured what it says. Both ways of writing new keys: from one
  // event loop (the default, as the proxy writes them) and from a thread per request (serve).
  void crossKeyCostComparesHoldWithOffOnTheSameTable_data() {
    QTest::addColumn<QString>("storeWrites");
    QTest::newRow("event loop") << "loop";
    QTest::newRow("thread per request") << "threads";
  }
  void crossKeyCostComparesHoldWithOffOnTheSameTable() {
    QFETCH(QString, storeWrites);
    test::TestDatabase db("bench_cli_cross_key_" + storeWrites.toStdString());
    const auto runs = costRuns(db, "--cross-key-cost", "cross_key_hold", "cross_key_off", nullptr,
                               {"--store-writes", storeWrites.toStdString()});
    double hold = 0, off = 0;
    for (const auto& run : runs) {
      hold += run.at("cross_key_hold").at("keys").get<double>();
      off += run.at("cross_key_off").at("keys").get<double>();
    }
    auto c = db.connect();
    const auto marked = c.exec(
        "SELECT count(*) FILTER (WHERE same_request_latest) AS marked, count(*) FILTER (WHERE same_request_latest "
        "IS NULL) AS unmarked FROM idem.keys WHERE idem_key LIKE $1",
        {storeWrites == "loop" ? "bench-distinct-loop-%" : "bench-distinct-%"});
    QVERIFY2(static_cast<double>(marked.integer(0, "marked")) >= hold, std::to_string(hold).c_str());
    QVERIFY2(static_cast<double>(marked.integer(0, "unmarked")) >= off, std::to_string(off).c_str());
  }

  // --in-flight-cost N: the write path finding its count beside N fixed, the same table; a count
  // outside 1..64 is refused naming the flag.
  // --batch-bound: pgbench sending Idem's batch statements in every shape of 4 requests in
  // flight (4 connections x 1 key, 2 x 2, 1 x 4), each beside the same minimal runs. The keys it
  // counts are the keys it made, and every one of them was completed by the batch completion.
  void batchBoundRunsEveryShapeAndCompletesWhatItClaims() {
    test::TestDatabase db("bench_cli_batch_bound");
    const auto report = costReport(db, "--batch-bound", nullptr, "4", "1");
    const auto& runs = report.at("runs");
    QCOMPARE(runs.size(), std::size_t{3});
    double made = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const auto& run = runs[i];
      QCOMPARE(run.at("clients").get<int>(), 4);
      const std::string shape = run.at("shape").get<std::string>();
      const int keysPerStatement = 1 << i;  // 4 x 1, 2 x 2, 1 x 4
      QCOMPARE(shape, std::to_string(4 / keysPerStatement) + " x " + std::to_string(keysPerStatement) + " keys");
      checkCostRun(run, "idem_batch_sql", "pgbench_minimal_prepared", keysPerStatement);
      const double keys = run.at("idem_batch_sql").at("keys").get<double>();
      QCOMPARE(std::fmod(keys, keysPerStatement), 0.0);
      made += keys;
      QCOMPARE(run.at("pgbench_minimal_prepared"), runs[0].at("pgbench_minimal_prepared"));
    }
    auto c = db.connect();
    const auto r = c.exec("SELECT count(*) FILTER (WHERE state = 'done') AS done, count(*) FILTER (WHERE state <> "
                          "'done') AS open FROM idem.keys WHERE idem_key LIKE 'srv-%'");
    QCOMPARE(static_cast<double>(r.integer(0, "done")), made);
    QCOMPARE(r.integer(0, "open"), 0LL);
  }

  void inFlightCostComparesAdaptingWithAFixedCount() {
    test::TestDatabase db("bench_cli_in_flight");
    const auto runs = costRuns(db, "--in-flight-cost", "in_flight_adapting", "in_flight_fixed", "2");
    QCOMPARE(runs.size(), std::size_t{2});
    for (const char* bad : {"0", "65", "eight"}) {
      std::string out;
      QCOMPARE(test::runIdemctl({"bench", "--db", db.conninfo(), "--in-flight-cost", bad}, &out), 2);
      QVERIFY2(out.find("--in-flight-cost must be the fixed count to compare with") != std::string::npos, out.c_str());
    }
  }

 private:
  /// Runs `idemctl bench <mode> [value]` with `clients`, `rounds` rounds of 1 s, in JSON.
  static nlohmann::json costReport(test::TestDatabase& db, const char* mode, const char* value, const char* clients,
                                   const char* rounds, const std::vector<std::string>& more = {}) {
    std::string out;
    std::vector<std::string> args{"bench", "--db", db.conninfo(), mode};
    if (value != nullptr) args.emplace_back(value);
    args.insert(args.end(), more.begin(), more.end());
    for (const char* a : {"--seconds", "1", "--rounds", rounds, "--clients", clients, "--format", "json"})
      args.emplace_back(a);
    const int rc = test::runIdemctl(args, &out);
    if (rc != 0) QTest::qFail(out.c_str(), __FILE__, __LINE__);
    return nlohmann::json::parse(out.substr(out.find('{')));
  }

  /// Every figure of both contenders of one run against their totals, and every ratio.
  /// `keysPerCommit`: the most keys one commit of `first` can make (a claim or a completion each).
  static void checkCostRun(const nlohmann::json& run, const char* first, const char* second, double keysPerCommit = 1) {
    for (const char* contender : {first, second}) {
      const auto& c = run.at(contender);
      const double keys = c.at("keys").get<double>();
      QVERIFY2(keys > 0, contender);
      // Every new key commits at least once (its claim, alone or in a batch) and writes WAL.
      QVERIFY2(c.at("commits").get<double>() * (std::string_view(contender) == first ? keysPerCommit : 1) >= keys, contender);
      QVERIFY2(c.at("wal_bytes").get<double>() > 0 && c.at("wal_records").get<double>() > 0, contender);
      QVERIFY2(c.at("server_cpu_s").get<double>() > 0, contender);
      const auto& per = c.at("figures");
      checkRatio(per, "keys/s", keys / c.at("seconds").get<double>());
      checkRatio(per, "commits/key", c.at("commits").get<double>() / keys);
      checkRatio(per, "WAL B/key", c.at("wal_bytes").get<double>() / keys);
      checkRatio(per, "PG CPU ms/key", 1000 * c.at("server_cpu_s").get<double>() / keys);
    }
    for (const char* figure : {"keys/s", "commits/key", "WAL B/key", "WAL rec/key", "PG CPU ms/key"})
      checkRatio(run.at("ratios"), figure,
                 run.at(first).at("figures").at(figure).get<double>() /
                     run.at(second).at("figures").at(figure).get<double>());
  }

  /// Runs `idemctl bench <mode> [value]` at 2 and 3 clients, 2 rounds, and checks every figure
  /// and ratio of both contenders against their totals.
  static nlohmann::json costRuns(test::TestDatabase& db, const char* mode, const char* first, const char* second,
                                 const char* value = nullptr, const std::vector<std::string>& more = {}) {
    const auto report = costReport(db, mode, value, "2,3", "2", more);
    [&] {
      QCOMPARE(report.at("rounds").get<int>(), 2);
      const auto& runs = report.at("runs");
      QCOMPARE(runs.size(), std::size_t{2});
      QCOMPARE(runs[0].at("clients").get<int>(), 2);
      QCOMPARE(runs[1].at("clients").get<int>(), 3);
      for (const auto& run : runs) {
        checkCostRun(run, first, second);
        if (QTest::currentTestFailed()) return;
      }
    }();
    return report.at("runs");
  }

 private slots:
  void badArgumentsExitTwoAndSayWhich() {
    for (const auto& [option, value] : std::vector<std::pair<std::string, std::string>>{
             {"--format", "yaml"}, {"--seconds", "0"}, {"--seconds", "soon"}, {"--profile", "everything"},
             {"--rounds", "0"}, {"--store-writes", "sometimes"}}) {
      std::string out;
      const int rc = test::runIdemctl({"bench", option, value}, &out);
      QVERIFY2(rc == 2, (option + " " + value + ": " + out).c_str());
      QVERIFY2(out.find(option.substr(2)) != std::string::npos, out.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestBenchCli)
#include "tst_bench_cli.moc"
