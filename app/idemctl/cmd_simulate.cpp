// idemctl simulate: runs the retry/backoff simulator (core/sim) on a scenario (built in or a
// JSON config) for one or more policies and prints the verdict first (text, the default) or
// JSON (--format json, for scripts); --bench measures simulated attempts per second.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

#include "app/idemctl/command.h"
#include "app/idemctl/simulate_tiers.h"
#include "core/sim/config_parse.h"
#include "core/sim/compare.h"
#include "core/sim/engine.h"
#include "core/sim/policychoice.h"
#include "core/sim/presets.h"
#include "core/sim/report.h"
#include "core/sim/scenarios.h"
#include "core/sim/schedule.h"
#include "core/sim/verdict.h"

namespace {

constexpr const char* kUsage =
    "(--scenario NAME | --config FILE) [--policy P[,P…]]… [--attempts] [--format text|json] [--seed N]\n"
    "       idemctl simulate --bench [--config FILE]\n"
    "       idemctl simulate --list-presets | --list-scenarios\n"
    "       idemctl simulate --config FILE --schedule PROFILE [--operations N]\n"
    "--schedule: one operation's retry offsets against a fault that never clears, PROFILE as the\n"
    "endpoint's fault routes name it (500, 503-retry-after-2, 409, reset, hang); compare with\n"
    "`idemctl measure` on the real client.\n"
    "FILE is a JSON simulator config ('-' reads standard input); see docs/simulator.md.\n"
    "--policy: a preset or a JSON file with a policy; repeat it or list several to compare them\n"
    "side by side on the same scenario (a built-in scenario compares its policies A and B).\n"
    "Text (the default) leads with the verdict; --attempts adds a row per attempt number.\n"
    "Exit codes: 0 done, 2 bad arguments or config.";

bool readAll(const std::string& path, std::string* text) {
  if (path == "-") {
    text->assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buf;
  buf << in.rdbuf();
  *text = buf.str();
  return true;
}

int usageError(const std::string& message) {
  std::cerr << "idemctl simulate: " << message << '\n';
  return idemctl::kUsage;
}

/// The benchmark scenario when no config is given: random failures retried with full jitter
/// against an unlimited server, so the figure measures the engine rather than a storm.
idem::sim::SimConfig benchScenario() {
  idem::sim::SimConfig c;
  c.seed = 1;
  c.clients.operations = 1'000'000;
  c.clients.arrivalRatePerSecond = 2000;
  c.policy.maxAttempts = 4;
  c.server.failureRate = 0.5;
  c.server.failureStatus = 503;
  c.policy.budget = {};
  return c;
}

int runBench(const idem::sim::SimConfig& config) {
  // One warm-up run keeps page faults of the first allocation out of the figure.
  auto warm = config;
  warm.clients.operations = std::min<std::int64_t>(config.clients.operations, 20000);
  (void)idem::sim::simulate(warm);
  const auto begin = std::chrono::steady_clock::now();
  const auto result = idem::sim::simulate(config);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  const double rate = static_cast<double>(result.attempts) / seconds;
  std::printf("simulated %lld attempts (%lld operations) in %.3f s on one core\n",
              static_cast<long long>(result.attempts), static_cast<long long>(result.operations), seconds);
  std::printf("%.2f million simulated attempts per second\n", rate / 1e6);
  return idemctl::kOk;
}

int listScenarios() {
  for (const auto& s : idem::sim::builtInScenarios()) std::cout << s.id << "  " << s.title << '\n';
  return idemctl::kOk;
}

int listPresets() {
  for (const auto& p : idem::sim::presets()) {
    std::cout << p.name << "  " << p.title << "\n    source: " << p.source << "\n    measured: " << p.measured
              << "\n    " << idem::sim::policyToJson(p.policy).dump() << '\n';
  }
  for (const auto& a : idem::sim::presetAliases()) std::cout << a.alias << "  old name of " << a.name << '\n';
  return idemctl::kOk;
}

// Per retry: min, median and max of the offset from the first attempt, over N operations.
int printSchedule(const idem::sim::SimConfig& config, const std::string& profile, const std::string& opsText) {
  const auto fault = idem::sim::parseFaultSpec(profile);
  if (!fault)
    return usageError("--schedule: unknown profile '" + profile + "' (500, 503-retry-after-2, 409, reset, hang)");
  int ops = 1000;
  if (!opsText.empty() && !idemctl::parseInt(opsText, 1, 1'000'000, ops))
    return usageError("--operations must be a whole number from 1 to 1000000");
  const auto s = idem::sim::simulateSchedule(config.policy, *fault, ops, config.seed, config.server.fastLatency);
  std::vector<double> attempts(s.attemptsPerOperation.begin(), s.attemptsPerOperation.end());
  std::sort(attempts.begin(), attempts.end());
  std::printf("policy %s against '%s', %d operations: attempts p50 %.0f\n",
              config.policy.preset.empty() ? "(custom)" : config.policy.preset.c_str(), profile.c_str(), ops,
              attempts[attempts.size() / 2]);
  for (std::size_t n = 0; n < s.offsets.size(); ++n) {
    auto v = s.offsets[n];
    std::sort(v.begin(), v.end());
    std::printf("  retry %zu (%zu): offset s min/p50/max %.3f / %.3f / %.3f\n", n + 1, v.size(), v.front(),
                v[(v.size() + 1) / 2 - 1], v.back());
  }
  return idemctl::kOk;
}

/// The policies to run: --policy items (repeated or comma-separated), else the scenario's
/// A and B, else the config's own.
bool choosePolicies(const idemctl::Args& args, const idem::sim::SimConfig& config,
                    const idem::sim::BuiltInScenario* scenario, std::vector<idem::sim::PolicyChoice>& out,
                    std::string& error) {
  for (const auto& value : args.getAll("policy")) {
    std::stringstream list(value);
    std::size_t before = out.size();
    for (std::string item; std::getline(list, item, ',');) {
      if (item.empty()) continue;
      try {
        out.push_back(idem::sim::choosePolicy(item));
      } catch (const idem::sim::ConfigError& e) {
        error = e.what();
        return false;
      }
    }
    if (out.size() == before) {
      error = "--policy needs a preset or a file (e.g. --policy stripe-node,urllib3)";
      return false;
    }
  }
  if (!out.empty()) return true;
  const std::string a = idem::sim::policyLabel(config.policy);
  if (!scenario) {
    out.push_back({a, config.policy});
    return true;
  }
  const auto b = idem::sim::scenarioPolicyB(*scenario);
  out.push_back({"A " + a, config.policy});
  out.push_back({"B " + idem::sim::policyLabel(b), b});
  return true;
}

int runSimulate(const idemctl::Args& args) {
  if (!args.positional().empty()) return usageError("unexpected argument '" + args.positional().front() + "'");
  if (args.has("list-presets")) return listPresets();
  if (args.has("list-scenarios")) return listScenarios();
  const std::string format = args.get("format", "text");
  if (format != "json" && format != "text") return usageError("--format must be text or json");

  idem::sim::SimConfig config;
  const idem::sim::BuiltInScenario* scenario = nullptr;
  if (args.has("scenario") && args.has("config")) return usageError("--scenario and --config: give one of them");
  if (args.has("scenario")) {
    scenario = idem::sim::findScenario(args.get("scenario"));
    if (!scenario) {
      std::string ids;
      for (const auto& s : idem::sim::builtInScenarios()) ids += (ids.empty() ? "" : ", ") + std::string(s.id);
      return usageError("--scenario: no scenario '" + args.get("scenario") + "' (" + ids + ")");
    }
    config = idem::sim::scenarioConfig(*scenario);
  } else if (args.has("config")) {
    const std::string path = args.get("config");
    if (path.empty()) return usageError("--config needs a file name (or - for standard input)");
    std::string text;
    if (!readAll(path, &text)) return usageError("cannot read config file '" + path + "'");
    try {
      config = idem::sim::parseConfigText(text);
    } catch (const idem::sim::ConfigError& e) {
      return usageError("bad config '" + path + "': " + std::string(e.what()));
    }
  } else if (!args.has("bench")) {
    return usageError("--scenario NAME or --config FILE is required (--list-scenarios names the built-in ones). "
                      "usage: idemctl simulate " + std::string(kUsage));
  } else {
    config = benchScenario();
  }
  if (args.has("seed")) {
    const std::string seed = args.get("seed");
    try {
      std::size_t used = 0;
      if (seed.empty() || seed.front() == '-') throw std::invalid_argument(seed);
      config.seed = std::stoull(seed, &used);
      if (used != seed.size()) throw std::invalid_argument(seed);
    } catch (const std::exception&) {
      return usageError("--seed must be a non-negative integer");
    }
  }
  std::vector<idem::sim::PolicyChoice> policies;
  std::string error;
  if (!choosePolicies(args, config, scenario, policies, error)) return usageError(error);
  config.policy = policies.front().policy;
  if (args.has("bench")) return runBench(config);
  if (args.has("schedule")) return printSchedule(config, args.get("schedule"), args.get("operations"));
  if (args.has("tiers")) {
    // A scenario's A/B pair without --policy: its first (A) is the clients every tier meets.
    if (args.has("policy") && policies.size() > 1)
      return usageError("--tiers runs one client policy against every tier: give one --policy");
    if (format != "json") {
      if (scenario) std::cout << "Scenario: " << scenario->title << '\n';
      std::cout << "Clients: " << policies.front().name << '\n';
    }
    return idemctl::simulateTiers(config, args.get("tiers"), format, std::cout, std::cerr);
  }

  std::vector<idem::sim::NamedResult> runs;
  for (const auto& choice : policies) {
    auto c = config;
    c.policy = choice.policy;
    runs.push_back({choice.name, idem::sim::simulate(c)});
  }
  const bool attempts = args.has("attempts");
  if (format == "json") {
    // One policy keeps the result's own shape (scripts read it); several are a list of runs.
    auto j = runs.size() == 1 ? idem::sim::toJson(runs.front().result) : idem::sim::comparisonJson(runs);
    if (scenario) j["scenario"] = {{"id", scenario->id}, {"title", scenario->title}};
    std::cout << j.dump(2) << '\n';
    return idemctl::kOk;
  }
  if (scenario) std::cout << "Scenario: " << scenario->title << '\n';
  if (runs.size() == 1) {
    std::cout << idem::sim::toText(runs.front().result, attempts);
    return idemctl::kOk;
  }
  std::cout << idem::sim::comparisonText(runs);
  if (attempts)
    for (const auto& run : runs) std::cout << '\n' << idem::sim::toText(run.result, true);
  return idemctl::kOk;
}

}  // namespace

IDEMCTL_COMMAND("simulate", "simulate client retry policies against key expiry and server load", kUsage,
                {idemctl::Flag::option("scenario", "NAME", "A built-in scenario (--list-scenarios names them).",
                                       "required unless --config or --bench"),
                 idemctl::Flag::option("config", "FILE", "A JSON simulator config; - reads standard input.",
                                       "required unless --scenario or --bench"),
                 idemctl::Flag::option("policy", "P[,P...]",
                                       "A preset or a JSON policy file; repeat or list several to compare them.",
                                       "the scenario's A and B, or the config's own"),
                 idemctl::Flag::toggle("attempts", "Add a row per attempt number."),
                 idemctl::Flag::option("format", "text|json", "text leads with the verdict.", "text"),
                 idemctl::Flag::option("seed", "N", "The random seed (a non-negative integer).", "the config's"),
                 idemctl::Flag::toggle("bench", "Time the simulator's engine on one core."),
                 idemctl::Flag::toggle("list-presets", "List the built-in client policies."),
                 idemctl::Flag::toggle("list-scenarios", "List the built-in scenarios."),
                 idemctl::Flag::option("schedule", "PROFILE",
                                       "One operation's retry offsets against a fault that never clears "
                                       "(500, 503-retry-after-2, 409, reset, hang).",
                                       "off"),
                 idemctl::Flag::option("operations", "N", "Operations for --schedule (1 to 1000000).", "1000"),
                 idemctl::Flag::option("tiers", "POLICY",
                                       "An Idem policy file: run the scenario's clients against each of its tiers "
                                       "(TTL, lease, cross_key) and give the duplicates per tier, with cross-key "
                                       "detection as the tier has it and switched the other way.",
                                       "off")},
                runSimulate);
