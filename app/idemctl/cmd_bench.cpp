// idemctl bench: prints the library's throughput beside pgbench's, measured in one run on one
// server, and their ratios. A benchmark, not a test: the machine may be shared and noisy.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/idemctl/bench.h"
#include "app/idemctl/command.h"
#include "core/cluster/localcluster.h"
#include "core/store/migrations.h"

namespace {

/// New keys/s and replays/s of one contender.
struct Pair {
  double newPerS = 0, replayPerS = 0;
};

struct Row {
  int clients;
  Pair library, minimal, seed;               // the headline: pgbench in its default protocol
  Pair minimalPrepared, seedPrepared;        // the same SQL with pgbench -M prepared (stricter)
  Pair idemSql;                              // the library's own statements run by pgbench, prepared
  double libReplayUntraced;
  double libReplayUnseen;  // keys another process decided: the claim is tried before the read
  double libReplayOneKey, minimalReplayOneKey;  // a retry storm: every client on one key
};

nlohmann::json perSecond(const Pair& p) { return {{"new_per_s", p.newPerS}, {"replay_per_s", p.replayPerS}}; }

nlohmann::json ratiosAgainst(const Row& r, const Pair& minimal, const Pair& seed) {
  return {{"new_vs_minimal", r.library.newPerS / minimal.newPerS},
          {"replay_vs_minimal", r.library.replayPerS / minimal.replayPerS},
          {"replay_vs_seed", r.library.replayPerS / seed.replayPerS},
          {"new_vs_seed", r.library.newPerS / seed.newPerS}};
}

nlohmann::json toJson(const Row& r) {
  nlohmann::json ratios = ratiosAgainst(r, r.minimal, r.seed);
  ratios["replay_trace_off_vs_minimal"] = r.libReplayUntraced / r.minimal.replayPerS;
  ratios["one_key_replay_vs_minimal"] = r.libReplayOneKey / r.minimalReplayOneKey;
  ratios["replay_unseen_vs_minimal"] = r.libReplayUnseen / r.minimal.replayPerS;
  nlohmann::json prepared = ratiosAgainst(r, r.minimalPrepared, r.seedPrepared);
  prepared["replay_trace_off_vs_minimal"] = r.libReplayUntraced / r.minimalPrepared.replayPerS;
  prepared["replay_unseen_vs_minimal"] = r.libReplayUnseen / r.minimalPrepared.replayPerS;
  prepared["idem_sql_new_vs_minimal"] = r.idemSql.newPerS / r.minimalPrepared.newPerS;
  prepared["idem_sql_replay_vs_minimal"] = r.idemSql.replayPerS / r.minimalPrepared.replayPerS;
  return {{"clients", r.clients},
          {"library", perSecond(r.library)},
          {"library_trace_off", {{"replay_per_s", r.libReplayUntraced}}},
          {"library_unseen_keys", {{"replay_per_s", r.libReplayUnseen}}},
          {"pgbench_minimal", perSecond(r.minimal)},
          {"pgbench_seed", perSecond(r.seed)},
          {"pgbench_minimal_prepared", perSecond(r.minimalPrepared)},
          {"pgbench_seed_prepared", perSecond(r.seedPrepared)},
          {"pgbench_idem_sql_prepared", perSecond(r.idemSql)},
          {"one_key_storm",
           {{"library_replay_per_s", r.libReplayOneKey}, {"pgbench_minimal_replay_per_s", r.minimalReplayOneKey}}},
          {"ratios", ratios},
          {"ratios_prepared", prepared}};
}

void printRow(const char* label, const Pair& p) {
  std::printf("%-8s %-30s %12.0f %12.0f\n", "", label, p.newPerS, p.replayPerS);
}

void printRatio(const char* label, double newRatio, double replayRatio) {
  std::printf("%-8s %-30s %11.2fx %11.2fx\n", "", label, newRatio, replayRatio);
}

constexpr const char* kUsageText =
    "[--db CONNINFO] [--seconds N] [--format text|json] [--profile new|replay|replay-untraced|replay-unseen|replay-one-key "
    "[--clients N]]";

int usage(const std::string& message) { return idemctl::usageError("bench", kUsageText, message); }

int runBench(const idemctl::Args& args) {
  idemctl::bench::Settings s;
  if (!idemctl::parseInt(args.get("seconds", "5"), 1, 3600, s.seconds))
    return usage("--seconds must be a whole number of seconds from 1 to 3600");
  const std::string format = args.get("format", "text");
  if (format != "text" && format != "json") return usage("--format must be text or json");
  const bool json = format == "json";
  const std::string profile = args.get("profile");
  if (args.has("profile") && profile != "new" && profile != "replay" && profile != "replay-untraced" &&
      profile != "replay-unseen" && profile != "replay-one-key")
    return usage("--profile must be new, replay, replay-untraced, replay-unseen or replay-one-key");
  int profileClients = 8;
  if (!idemctl::parseInt(args.get("clients", "8"), 1, 256, profileClients))
    return usage("--clients must be a whole number from 1 to 256");
  std::unique_ptr<idem::cluster::LocalCluster> cluster;
  std::string dir;
  if (args.has("db")) {
    s.conninfo = args.get("db");
  } else {
    // No server given: a private one with default durability (fsync on), thrown away after.
    char tmpl[] = "/tmp/idem-bench-XXXXXX";
    dir = mkdtemp(tmpl);
    cluster = std::make_unique<idem::cluster::LocalCluster>(dir);
    if (!json) std::cerr << "starting a private PostgreSQL in " << dir << " (fsync on)...\n";
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
  if (!json) std::cerr << "preloading " << s.preloaded << " keys (library and seed table)...\n";
  idemctl::bench::prepareSeedTable(s);
  idemctl::bench::prepareLibrary(s);

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
  std::vector<Row> rows;
  for (int clients : {1, 8}) {
    if (!json) std::cerr << "measuring " << clients << " client(s), " << s.seconds << " s per figure...\n";
    Row r{};
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

  if (json) {
    nlohmann::json out{{"seconds_per_figure", s.seconds}, {"runs", nlohmann::json::array()}};
    for (const auto& r : rows) out["runs"].push_back(toJson(r));
    out["ratios"] = toJson(rows.back())["ratios"];  // the 8-client ratios, the ones the targets name
    out["ratios_prepared"] = toJson(rows.back())["ratios_prepared"];
    std::cout << out.dump(2) << '\n';
    return idemctl::kOk;
  }
  std::printf("%-8s %-30s %12s %12s\n", "clients", "", "new keys/s", "replays/s");
  for (const auto& r : rows) {
    std::printf("%-8d %-30s %12.0f %12.0f\n", r.clients, "library (Idem)", r.library.newPerS, r.library.replayPerS);
    printRow("pgbench minimal SQL", r.minimal);
    printRow("pgbench seed design", r.seed);
    printRatio("library / minimal", r.library.newPerS / r.minimal.newPerS,
               r.library.replayPerS / r.minimal.replayPerS);
    printRatio("library / seed", r.library.newPerS / r.seed.newPerS, r.library.replayPerS / r.seed.replayPerS);
    std::printf("%-8s the same SQL sent by pgbench -M prepared (parsed once, as the library sends its own):\n", "");
    printRow("pgbench minimal SQL, prepared", r.minimalPrepared);
    printRow("pgbench seed design, prepared", r.seedPrepared);
    printRatio("library / minimal, prepared", r.library.newPerS / r.minimalPrepared.newPerS,
               r.library.replayPerS / r.minimalPrepared.replayPerS);
    printRatio("library / seed, prepared", r.library.newPerS / r.seedPrepared.newPerS,
               r.library.replayPerS / r.seedPrepared.replayPerS);
    std::printf("%-8s diagnostics:\n", "");
    std::printf("%-8s %-30s %12s %12.0f  (what the trace costs)\n", "", "library, trace off", "",
                r.libReplayUntraced);
    std::printf("%-8s %-30s %12s %12.0f  (keys another process decided: claim tried first, %.2fx)\n", "",
                "library, keys new to process", "", r.libReplayUnseen, r.libReplayUnseen / r.minimal.replayPerS);
    printRow("pgbench Idem's SQL, prepared", r.idemSql);
    printRatio("Idem's SQL / minimal, prepared", r.idemSql.newPerS / r.minimalPrepared.newPerS,
               r.idemSql.replayPerS / r.minimalPrepared.replayPerS);
    std::printf("%-8s %-30s %12s %12.0f  (every client replays one key; pgbench minimal %.0f, %.2fx)\n", "",
                "library, one hot key", "", r.libReplayOneKey, r.minimalReplayOneKey,
                r.libReplayOneKey / r.minimalReplayOneKey);
  }
  return idemctl::kOk;
}

}  // namespace

IDEMCTL_COMMAND("bench", "library hot paths vs pgbench baselines, with ratios",
                kUsageText,
                {"db", "seconds", "format", "profile", "clients"}, runBench);
