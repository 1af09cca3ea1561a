// idemctl bench: prints the library's throughput beside pgbench's, measured in one run on one
// server, and their ratios. A benchmark, not a test: the machine may be shared and noisy.
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>

#include "app/idemctl/bench.h"
#include "app/idemctl/bench_costs.h"
#include "app/idemctl/bench_report.h"
#include "app/idemctl/command.h"
#include "core/cluster/localcluster.h"
#include "core/store/migrations.h"

namespace {

constexpr const char* kUsageText =
    "[--db CONNINFO] [--seconds N] [--format text|json|markdown] [--profile new|replay|replay-untraced|replay-unseen|replay-one-key "
    "[--clients N]] [--new-key-costs [--clients N,N…] [--rounds N]] [--snapshot-cost [--clients N,N…] [--rounds N]] [--cross-key-cost [--store-writes loop|threads] [--clients N,N…] [--rounds N]] [--in-flight-cost N [--clients N,N…] [--rounds N]] [--batch-bound [--clients N,N…] [--rounds N]] [--write-paths [--clients N,N…] [--rounds N]]";

int usage(const std::string& message) { return idemctl::usageError("bench", kUsageText, message); }

int runBench(const idemctl::Args& args) {
  idemctl::bench::Settings s;
  if (!idemctl::parseInt(args.get("seconds", "5"), 1, 3600, s.seconds))
    return usage("--seconds must be a whole number of seconds from 1 to 3600");
  const std::string format = args.get("format", "text");
  if (format != "text" && format != "json" && format != "markdown")
    return usage("--format must be text, json or markdown");
  // Progress goes to stderr only for a person watching; JSON and Markdown are for pasting.
  const bool quiet = format != "text";
  const std::string profile = args.get("profile");
  if (args.has("profile") && profile != "new" && profile != "replay" && profile != "replay-untraced" &&
      profile != "replay-unseen" && profile != "replay-one-key")
    return usage("--profile must be new, replay, replay-untraced, replay-unseen or replay-one-key");
  const bool costs = args.has("new-key-costs");
  const bool crossKeyCost = args.has("cross-key-cost");
  const bool snapshot = args.has("snapshot-cost");
  const bool inFlightCost = args.has("in-flight-cost");
  const bool batchBound = args.has("batch-bound");
  const bool writePaths = args.has("write-paths");
  if (costs + crossKeyCost + snapshot + inFlightCost + batchBound + writePaths + args.has("profile") > 1)
    return usage("--new-key-costs, --cross-key-cost, --in-flight-cost, --batch-bound, --write-paths, --snapshot-cost "
                 "and --profile are different runs: choose one");
  const std::string storeWrites = args.get("store-writes", "loop");
  if (storeWrites != "loop" && storeWrites != "threads") return usage("--store-writes must be loop or threads");
  if (args.has("store-writes") && !crossKeyCost) return usage("--store-writes goes with --cross-key-cost");
  int fixedInFlight = 0;
  if (inFlightCost && !idemctl::parseInt(args.get("in-flight-cost"), 1, 64, fixedInFlight))
    return usage("--in-flight-cost must be the fixed count to compare with, a whole number from 1 to 64");
  int profileClients = 8;
  std::vector<int> costClients;
  if (costs || crossKeyCost || snapshot || inFlightCost || batchBound || writePaths) {
    for (const std::string& each : idemctl::splitList(args.get("clients", crossKeyCost ? "1,8,64" : "8,64"))) {
      int n = 0;
      if (!idemctl::parseInt(each, 1, 256, n)) return usage("--clients must be whole numbers from 1 to 256, e.g. 8,64");
      costClients.push_back(n);
    }
  } else if (!idemctl::parseInt(args.get("clients", "8"), 1, 256, profileClients)) {
    return usage("--clients must be a whole number from 1 to 256");
  }
  int rounds = 2;
  if (!idemctl::parseInt(args.get("rounds", "2"), 1, 100, rounds)) return usage("--rounds must be a whole number from 1 to 100");
  std::unique_ptr<idem::cluster::LocalCluster> cluster;
  std::string dir;
  if (args.has("db")) {
    s.conninfo = args.get("db");
  } else {
    // No server given: a private one with default durability (fsync on), thrown away after.
    char tmpl[] = "/tmp/idem-bench-XXXXXX";
    dir = mkdtemp(tmpl);
    cluster = std::make_unique<idem::cluster::LocalCluster>(dir);
    if (!quiet) std::cerr << "starting a private PostgreSQL in " << dir << " (fsync on)...\n";
    cluster->start();
    idem::pg::Connection admin(cluster->conninfo());
    admin.exec("CREATE DATABASE idem_bench");
    s.conninfo = cluster->conninfo("idem_bench");
  }
  struct Cleanup {
    idem::cluster::LocalCluster* c;
    std::string dir;
    ~Cleanup() {
      if (!c) return;
      c->stop();
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{cluster.get(), dir};

  {
    idem::pg::Connection conn(s.conninfo);
    idem::store::migrate(conn);
  }
  if (snapshot) {
    if (!quiet)
      std::cerr << "measuring replays from memory, the policy taken per request beside one held, " << rounds
                << " alternating round(s) of " << s.seconds << " s each...\n";
    for (int clients : costClients) {
      const auto cost = idemctl::bench::snapshotCost(s, clients, rounds);
      std::printf("replays from memory, %d client(s): policy taken per request %.0f/s, one snapshot held %.0f/s, "
                  "ratio %.3f\n",
                  clients, cost.perRequest, cost.held, cost.held > 0 ? cost.perRequest / cost.held : 0.0);
    }
    return idemctl::kOk;
  }
  if (!quiet) std::cerr << "preloading " << s.preloaded << " keys (library and seed table)...\n";
  idemctl::bench::prepareSeedTable(s);
  // The comparison runs: which one, what it says it measures, how, and what its table names.
  struct Comparison {
    std::string what;
    std::function<std::vector<idemctl::bench::CostRow>()> measure;
    const idemctl::bench::Contenders* names;
  };
  std::vector<std::string> settled;
  std::optional<Comparison> comparison;
  if (costs)
    comparison = Comparison{"measuring what a new key costs",
                            [&] { return idemctl::bench::measureNewKeyCosts(s, costClients, rounds); },
                            &idemctl::bench::kLibraryVsPgbench};
  else if (crossKeyCost)
    comparison = Comparison{"measuring what cross_key hold costs a new key, its writes from " +
                                std::string(storeWrites == "loop" ? "one event loop" : "a thread per request"),
                            [&] {
                              return idemctl::bench::measureCrossKeyCosts(s, costClients, rounds,
                                                                          storeWrites == "loop");
                            },
                            &idemctl::bench::kCrossKeyHoldVsOff};
  else if (batchBound)
    comparison = Comparison{"measuring the most batching can make: pgbench sending Idem's batch statements in every "
                            "shape, beside its minimal INSERT + UPDATE",
                            [&] { return idemctl::bench::measureBatchBound(s, costClients, rounds); },
                            &idemctl::bench::kBatchBoundVsPgbench};
  else if (writePaths)
    comparison = Comparison{"measuring new keys through the store alone and through the library, each driven by a "
                            "thread per request and by one event loop, beside pgbench's minimal INSERT + UPDATE",
                            [&] { return idemctl::bench::measureWritePaths(s, costClients, rounds); },
                            &idemctl::bench::kWritePathVsPgbench};
  else if (inFlightCost)
    comparison = Comparison{
        "measuring new keys with the write lanes adapting beside " + std::to_string(fixedInFlight) + " in flight",
        [&] { return idemctl::bench::measureInFlightCosts(s, costClients, rounds, fixedInFlight, &settled); },
        &idemctl::bench::kAdaptingVsFixed};
  if (!comparison) idemctl::bench::prepareLibrary(s);  // the replay runs' keys; new keys need none

  if (comparison) {
    if (!quiet)
      std::cerr << comparison->what << ", " << rounds << " alternating round(s) of " << s.seconds
                << " s per figure...\n";
    const auto rows = comparison->measure();
    const auto& names = *comparison->names;
    if (!quiet)
      for (const auto& line : settled) std::cerr << "adapting lanes ended at (claims/completions in flight) " << line << '\n';
    std::cout << (format == "json"       ? idemctl::bench::costsJson(rows, names, s.seconds, rounds)
                  : format == "markdown" ? idemctl::bench::costsMarkdown(rows, names)
                                         : idemctl::bench::costsText(rows, names));
    return idemctl::kOk;
  }

  if (args.has("profile")) {
    // One measurement alone, long enough to attach a profiler to.
    const int clients = profileClients;
    const std::string& what = profile;
    double rate = what == "new"              ? idemctl::bench::libraryNewKeys(s, clients)
                  : what == "replay-one-key" ? idemctl::bench::libraryReplaysOneKey(s, clients)
                  : what == "replay-unseen"  ? idemctl::bench::libraryReplaysUnseen(s, clients)
                                             : idemctl::bench::libraryReplays(s, clients, what != "replay-untraced");
    std::printf("library %s, %d client(s): %.0f/s\n", what.c_str(), clients, rate);
    return idemctl::kOk;
  }

  using idemctl::bench::Script;
  std::vector<idemctl::bench::Row> rows;
  for (int clients : {1, 8}) {
    if (!quiet) std::cerr << "measuring " << clients << " client(s), " << s.seconds << " s per figure...\n";
    idemctl::bench::Row r{};
    r.clients = clients;
    namespace b = idemctl::bench;
    using P = b::Protocol;
    // Each library figure runs right beside its SQL baselines so drifting load hits both.
    r.library.newPerS = b::libraryNewKeys(s, clients);
    r.minimal.newPerS = b::pgbench(s, Script::MinimalNew, clients, P::Default);
    r.minimalPrepared.newPerS = b::pgbench(s, Script::MinimalNew, clients, P::Prepared);
    r.idemSql.newPerS = b::pgbench(s, Script::IdemNew, clients, P::Prepared);
    r.seed.newPerS = b::pgbench(s, Script::SeedNew, clients, P::Default);
    r.seedPrepared.newPerS = b::pgbench(s, Script::SeedNew, clients, P::Prepared);
    r.library.replayPerS = b::libraryReplays(s, clients);
    r.minimal.replayPerS = b::pgbench(s, Script::MinimalReplay, clients, P::Default);
    r.minimalPrepared.replayPerS = b::pgbench(s, Script::MinimalReplay, clients, P::Prepared);
    r.idemSql.replayPerS = b::pgbench(s, Script::IdemReplay, clients, P::Prepared);
    r.seed.replayPerS = b::pgbench(s, Script::SeedReplay, clients, P::Default);
    r.seedPrepared.replayPerS = b::pgbench(s, Script::SeedReplay, clients, P::Prepared);
    r.libReplayUntraced = b::libraryReplays(s, clients, /*traced=*/false);
    r.libReplayUnseen = b::libraryReplaysUnseen(s, clients);
    r.libReplayOneKey = b::libraryReplaysOneKey(s, clients);
    r.minimalReplayOneKey = b::pgbench(s, Script::MinimalReplayOneKey, clients, P::Default);
    rows.push_back(r);
  }

  if (format == "json")
    std::cout << idemctl::bench::reportJson(rows, s.seconds);
  else if (format == "markdown")
    std::cout << idemctl::bench::reportMarkdown(rows);
  else
    std::cout << idemctl::bench::reportText(rows);
  return idemctl::kOk;
}

}  // namespace

IDEMCTL_COMMAND("bench", "library hot paths vs pgbench baselines, with ratios", kUsageText,
                {idemctl::Flag::option("db", "CONNINFO",
                                       "The store to measure on (it is migrated); without it a private PostgreSQL "
                                       "with fsync on is started and thrown away.",
                                       "a private cluster"),
                 idemctl::Flag::option("seconds", "N", "How long each measurement runs (1 to 3600).", "5"),
                 idemctl::Flag::option("format", "text|json|markdown", "How the report is written.", "text"),
                 idemctl::Flag::option("profile", "new|replay|replay-untraced|replay-unseen|replay-one-key",
                                       "Run this one measurement alone, long enough to attach a profiler.",
                                       "every measurement"),
                 idemctl::Flag::option("clients", "N",
                                       "Clients for --profile (1 to 256); for the comparison runs (--new-key-costs, "
                                       "--cross-key-cost, --in-flight-cost, --batch-bound, --write-paths, --snapshot-cost) a list.",
                                       "8; 8,64 for the comparison runs, 1,8,64 with --cross-key-cost"),
                 idemctl::Flag::toggle("new-key-costs",
                                       "Per new key: commits, WAL bytes and records, PostgreSQL's CPU and the "
                                       "client's, the library beside pgbench's minimal INSERT + UPDATE (-M prepared), "
                                       "in alternating rounds, with ratios."),
                 idemctl::Flag::toggle("cross-key-cost",
                                       "What the look for duplicates across keys costs a new key: a tier with cross_key "
                                       "hold beside the same tier with it off (each key its own body, so none matches), "
                                       "in alternating rounds — keys/s, commits, WAL, PostgreSQL's and this process's "
                                       "CPU per key, and hold / off. Clients from --clients."),
                 idemctl::Flag::option("store-writes", "loop|threads",
                                       "With --cross-key-cost: the new keys' writes from one event loop, waited on by "
                                       "no thread (as the proxy makes them), or from a thread per request (as serve "
                                       "does).",
                                       "loop"),
                 idemctl::Flag::option("in-flight-cost", "N",
                                       "New keys with the write lanes finding their own count of batches in flight "
                                       "(the default) beside N in flight, fixed, in alternating rounds — keys/s, "
                                       "commits, WAL, PostgreSQL's and this process's CPU per key, and adapting / "
                                       "fixed. Clients from --clients.",
                                       "not run"),
                 idemctl::Flag::toggle("batch-bound",
                                       "The most batching can make with --clients requests in flight: pgbench "
                                       "sending Idem's batch statements in every shape of c connections x b keys a "
                                       "statement (c x b = clients), beside pgbench's minimal INSERT + UPDATE at "
                                       "that many clients, in alternating rounds — per-key costs and ratios."),
                 idemctl::Flag::toggle("write-paths",
                                       "The store's write path alone (a fresh claim, then its completion, per key) "
                                       "driven two ways — a thread per request blocking on each statement, and one "
                                       "event loop that waits on none — each beside pgbench's minimal INSERT + "
                                       "UPDATE at --clients connections, in alternating rounds — per-key costs and "
                                       "ratios."),
                 idemctl::Flag::toggle("snapshot-cost",
                                       "Replays from memory with the policy taken per request (reloadable on "
                                       "SIGHUP) beside one snapshot held, in alternating rounds, with the ratio."),
                 idemctl::Flag::option("rounds", "N",
                                       "Alternating rounds for --new-key-costs, --cross-key-cost, --in-flight-cost, --batch-bound, --write-paths "
                                       "and --snapshot-cost "
                                       "(1 to 100).",
                                       "2")},
                runBench);
