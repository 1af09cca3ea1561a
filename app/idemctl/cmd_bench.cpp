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

struct Row {
  int clients;
  double libNew, minimalNew, seedNew, libReplay, minimalReplay, seedReplay, libReplayUntraced;
  double idemSqlNew, idemSqlReplay;  // the library's own statements run by pgbench
  double libReplayOneKey, minimalReplayOneKey;  // a retry storm: every client on one key
};

nlohmann::json toJson(const Row& r) {
  return {{"clients", r.clients},
          {"library", {{"new_per_s", r.libNew}, {"replay_per_s", r.libReplay}}},
          {"library_trace_off", {{"replay_per_s", r.libReplayUntraced}}},
          {"pgbench_minimal", {{"new_per_s", r.minimalNew}, {"replay_per_s", r.minimalReplay}}},
          {"pgbench_seed", {{"new_per_s", r.seedNew}, {"replay_per_s", r.seedReplay}}},
          {"pgbench_idem_sql", {{"new_per_s", r.idemSqlNew}, {"replay_per_s", r.idemSqlReplay}}},
          {"one_key_storm",
           {{"library_replay_per_s", r.libReplayOneKey}, {"pgbench_minimal_replay_per_s", r.minimalReplayOneKey}}},
          {"ratios",
           {{"new_vs_minimal", r.libNew / r.minimalNew},
            {"replay_vs_minimal", r.libReplay / r.minimalReplay},
            {"replay_vs_seed", r.libReplay / r.seedReplay},
            {"new_vs_seed", r.libNew / r.seedNew},
            {"replay_trace_off_vs_minimal", r.libReplayUntraced / r.minimalReplay},
            {"idem_sql_new_vs_minimal", r.idemSqlNew / r.minimalNew},
            {"idem_sql_replay_vs_minimal", r.idemSqlReplay / r.minimalReplay},
            {"one_key_replay_vs_minimal", r.libReplayOneKey / r.minimalReplayOneKey}}}};
}

int runBench(const idemctl::Args& args) {
  idemctl::bench::Settings s;
  s.seconds = std::stoi(args.get("seconds", "5"));
  const bool json = args.get("format", "text") == "json";
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
    const int clients = std::stoi(args.get("clients", "8"));
    const std::string what = args.get("profile");
    double rate = what == "new"           ? idemctl::bench::libraryNewKeys(s, clients)
                  : what == "replay-one-key" ? idemctl::bench::libraryReplaysOneKey(s, clients)
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
    // Each library figure runs right beside its SQL baselines so drifting load hits both.
    r.libNew = idemctl::bench::libraryNewKeys(s, clients);
    r.minimalNew = idemctl::bench::pgbench(s, Script::MinimalNew, clients);
    r.idemSqlNew = idemctl::bench::pgbench(s, Script::IdemNew, clients);
    r.seedNew = idemctl::bench::pgbench(s, Script::SeedNew, clients);
    r.libReplay = idemctl::bench::libraryReplays(s, clients);
    r.minimalReplay = idemctl::bench::pgbench(s, Script::MinimalReplay, clients);
    r.idemSqlReplay = idemctl::bench::pgbench(s, Script::IdemReplay, clients);
    r.seedReplay = idemctl::bench::pgbench(s, Script::SeedReplay, clients);
    r.libReplayUntraced = idemctl::bench::libraryReplays(s, clients, /*traced=*/false);
    r.libReplayOneKey = idemctl::bench::libraryReplaysOneKey(s, clients);
    r.minimalReplayOneKey = idemctl::bench::pgbench(s, Script::MinimalReplayOneKey, clients);
    rows.push_back(r);
  }

  if (json) {
    nlohmann::json out{{"seconds_per_figure", s.seconds}, {"runs", nlohmann::json::array()}};
    for (const auto& r : rows) out["runs"].push_back(toJson(r));
    out["ratios"] = toJson(rows.back())["ratios"];  // the 8-client ratios, the ones the targets name
    std::cout << out.dump(2) << '\n';
    return idemctl::kOk;
  }
  std::printf("%-8s %-22s %12s %12s\n", "clients", "", "new keys/s", "replays/s");
  for (const auto& r : rows) {
    std::printf("%-8d %-22s %12.0f %12.0f\n", r.clients, "library (Idem)", r.libNew, r.libReplay);
    std::printf("%-8s %-22s %12.0f %12.0f\n", "", "pgbench minimal SQL", r.minimalNew, r.minimalReplay);
    std::printf("%-8s %-22s %12.0f %12.0f\n", "", "pgbench seed design", r.seedNew, r.seedReplay);
    std::printf("%-8s %-22s %11.2fx %11.2fx\n", "", "library / minimal", r.libNew / r.minimalNew,
                r.libReplay / r.minimalReplay);
    std::printf("%-8s %-22s %11.2fx %11.2fx\n", "", "library / seed", r.libNew / r.seedNew,
                r.libReplay / r.seedReplay);
    std::printf("%-8s %-22s %12s %12.0f  (diagnostic: what the trace costs)\n", "", "library, trace off", "",
                r.libReplayUntraced);
    std::printf("%-8s %-22s %12.0f %12.0f  (diagnostic: Idem's statements without the library; no trace)\n", "",
                "pgbench Idem's SQL", r.idemSqlNew, r.idemSqlReplay);
    std::printf("%-8s %-22s %11.2fx %11.2fx\n", "", "Idem's SQL / minimal", r.idemSqlNew / r.minimalNew,
                r.idemSqlReplay / r.minimalReplay);
    std::printf("%-8s %-22s %12s %12.0f  (a retry storm: every client replays one key; pgbench minimal %0.f, %.2fx)\n",
                "", "library, one hot key", "", r.libReplayOneKey, r.minimalReplayOneKey,
                r.libReplayOneKey / r.minimalReplayOneKey);
  }
  return idemctl::kOk;
}

}  // namespace

IDEMCTL_COMMAND("bench", "library hot paths vs pgbench baselines, with ratios",
                "[--db CONNINFO] [--seconds N] [--format text|json] [--profile new|replay|replay-untraced|replay-one-key --clients N]",
                {"db", "seconds", "format", "profile", "clients"}, runBench);
