// idemctl sweep: archives expired keys, drops archived bodies past their tier's body retention,
// purges archived generations past their retention and events older than the longest
// retention. Safe to run several at once (SKIP LOCKED).
#include <csignal>
#include <charconv>
#include <iostream>
#include <thread>

#include "app/idemctl/command.h"
#include "app/idemctl/start_flags.h"
#include "core/policy/duration.h"
#include "core/policy/policy.h"
#include "core/store/lockwait.h"
#include "core/store/sweeper.h"

namespace {

std::atomic<bool> g_stop{false};

extern "C" void onSignal(int) { g_stop.store(true); }

struct Usage : std::runtime_error {
  using std::runtime_error::runtime_error;
};

idem::store::Millis durationArg(const idemctl::Args& args, std::string_view name, idem::store::Millis fallback) {
  if (!args.has(name)) return fallback;
  const std::string text = args.get(name);
  auto d = idem::policy::parseDuration(text);
  if (!d) throw Usage("--" + std::string(name) + ": \"" + text + "\" is not a duration (use 250ms, 2s, 30m, 24h or 30d)");
  return *d;
}

int batchArg(const idemctl::Args& args) {
  if (!args.has("batch")) return 1000;
  const std::string text = args.get("batch");
  int n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size() || n < 1 || n > 100000)
    throw Usage("--batch: \"" + text + "\" is not a number of rows between 1 and 100000");
  return n;
}

idem::store::Retentions fromPolicyFile(const std::string& path) {
  const auto policy = idem::policy::loadPolicyFile(path);  // PolicyError names the file and field
  idem::store::Retentions r;
  r.source = "policy file " + path;
  r.fallback = idem::store::kDefaultArchiveRetention;
  // A file names no service: its tiers hold for every service's keys of those tiers.
  for (const auto& t : policy.tiers) r.tiers.push_back({t.name, t.archiveRetention, t.bodyRetention, ""});
  return r;
}

std::string describe(const idem::store::Retentions& r) {
  std::string out = r.source;
  if (!r.tiers.empty()) {
    out += ":";
    for (std::size_t i = 0; i < r.tiers.size(); ++i)
      out += (i ? ", " : " ") + (r.tiers[i].service.empty() ? "" : r.tiers[i].service + "/") + r.tiers[i].tier + " " +
             idem::policy::formatDuration(r.tiers[i].retention) +
             (r.tiers[i].body ? " (bodies " + idem::policy::formatDuration(*r.tiers[i].body) + ")" : "");
  }
  return out + "; other tiers " + idem::policy::formatDuration(r.fallback);
}

void print(const idem::store::SweepReport& report) {
  std::cout << "archived " << report.archived << " expired key" << (report.archived == 1 ? "" : "s") << ", dropped "
            << report.bodiesDropped << " archived bod" << (report.bodiesDropped == 1 ? "y" : "ies")
            << " past body retention, purged "
            << report.purged << " archived generation" << (report.purged == 1 ? "" : "s") << " past retention, purged "
            << report.eventsPurged << " old event" << (report.eventsPurged == 1 ? "" : "s") << " ("
            << report.batches << " batch" << (report.batches == 1 ? "" : "es") << ", " << report.elapsed.count()
            << " ms)" << (report.complete ? "" : "; stopped with work left (budget or signal)") << '\n';
  // Left live, never dropped: two executions share a generation number (a race before schema 14).
  for (const auto& k : report.unarchivable)
    std::cerr << "idemctl sweep: not archived: key \"" << k.key << "\" (" << k.endpoint << ", tenant \"" << k.tenant
              << "\", service " << k.service << ") is at generation " << k.generation << " but generation " << k.archivedGeneration
              << " is already archived; both are kept — check the key with idemctl explain\n";
}

int runSweep(const idemctl::Args& args) {
  idem::store::SweepOptions options;
  idem::store::Millis interval{0};
  bool loop = args.has("loop");
  std::optional<idem::store::Retentions> fileRetentions;
  idem::store::Millis lockTimeout{0};
  try {
    options.batch = batchArg(args);
    options.budget = durationArg(args, "budget", idem::store::Millis{0});
    interval = durationArg(args, "interval", std::chrono::seconds(30));
    if (args.has("interval") && !loop) throw Usage("--interval needs --loop");
    if (loop && interval.count() <= 0) throw Usage("--interval must be longer than 0");
    if (args.has("policy")) fileRetentions = fromPolicyFile(args.get("policy"));
    lockTimeout = idem::store::kDefaultLockTimeout;
    if (auto bad = idemctl::readLockTimeout(args, lockTimeout); !bad.empty()) throw Usage(bad);
  } catch (const Usage& e) {
    std::cerr << "idemctl sweep: " << e.what() << '\n';
    return idemctl::kUsage;
  } catch (const idem::policy::PolicyError& e) {
    std::cerr << "idemctl sweep: " << e.what() << '\n';
    return idemctl::kUsage;
  }
  options.stop = &g_stop;
  // The batches skip locked rows; this bounds a wait on a table lock someone holds (a
  // service's LOCK TABLE, DDL).
  options.lockTimeout = lockTimeout;
  if (loop) {
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
  }

  std::optional<idem::pg::Connection> conn;
  bool announced = false;
  std::vector<std::string> lastSkipped;
  for (long long round = 0;; ++round) {
    try {
      if (!conn || !conn->healthy()) conn.emplace(idemctl::conninfo(args));
      // The policy in force is read every round: a newly chosen policy takes effect without a restart.
      options.retentions = fileRetentions ? *fileRetentions : idem::store::retentionsInForce(*conn);
      // A chosen policy the sweeper cannot follow is passed over, never a reason to stop.
      if (options.retentions.skipped != lastSkipped)
        for (const auto& why : options.retentions.skipped) std::cerr << "idemctl sweep: warning: " << why << '\n';
      lastSkipped = options.retentions.skipped;
      if (!announced || !loop) std::cout << "retention: " << describe(options.retentions) << '\n';
      announced = true;
      const auto report = idem::store::sweep(*conn, options);
      // A loop reports its first round and the rounds that did something, not every idle one.
      if (!loop || round == 0 || report.archived + report.bodiesDropped + report.purged + report.eventsPurged > 0 || !report.complete)
        print(report);
      std::cout.flush();
    } catch (const idem::pg::Unavailable& e) {
      std::cerr << "idemctl sweep: " << e.what() << (loop ? " (retrying next round)" : "\nCheck --db or the PG* variables.")
                << '\n';
      conn.reset();
      if (!loop) return idemctl::kUnavailable;
    } catch (const idem::store::RetentionError& e) {
      std::cerr << "idemctl sweep: " << e.what() << '\n';
      if (!loop) return idemctl::kFailure;
    } catch (const idem::pg::QueryError& e) {
      if (idem::store::isLockTimeout(e)) {
        std::cerr << "idemctl sweep: "
                  << idem::store::lockWaitTimeout(*conn, "a lock on the store's tables", lockTimeout, -1, true).what()
                  << '\n';
      } else {
        std::cerr << "idemctl sweep: " << e.what()
                  << (e.sqlstate() == "42883" ? "\nThe sweeper's functions are missing: run 'idemctl migrate'." : "")
                  << '\n';
      }
      if (!loop) return idemctl::kFailure;
    }
    if (!loop) return idemctl::kOk;
    // Sleep in short steps so a signal ends the loop promptly.
    const auto until = std::chrono::steady_clock::now() + interval;
    while (!g_stop.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (g_stop.load()) {
      std::cout << "stopped\n";
      return idemctl::kOk;
    }
  }
}

}  // namespace

IDEMCTL_COMMAND(
    "sweep", "archive expired keys and purge what is past retention (safe in parallel)",
    "[--db CONNINFO] [--batch N] [--policy FILE] [--budget DURATION] [--lock-timeout 10s] [--loop [--interval 30s]]",
    {idemctl::dbFlag(), idemctl::Flag::option("batch", "N", "Rows per transaction (1 to 100000).", "1000"),
     idemctl::Flag::option("policy", "FILE", "Take retention from this policy file.",
                           "the policy in force in the store, read every round"),
     idemctl::Flag::option("budget", "DURATION", "Stop after this long with work left; 0 is no limit.", "0"),
     idemctl::Flag::toggle("loop", "Sweep every --interval until SIGINT or SIGTERM."),
     idemctl::Flag::option("interval", "DURATION", "Time between rounds with --loop.", "30s"),
     idemctl::lockTimeoutFlag()},
    runSweep);
