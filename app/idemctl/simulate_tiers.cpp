#include "app/idemctl/simulate_tiers.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/policy/policy.h"
#include "core/sim/config_parse.h"
#include "core/sim/engine.h"

namespace idemctl {
namespace {

using idem::sim::CrossKey;

CrossKey::Mode simMode(idem::policy::CrossKeyMode m) {
  switch (m) {
    case idem::policy::CrossKeyMode::Off: return CrossKey::Mode::Off;
    case idem::policy::CrossKeyMode::Observe: return CrossKey::Mode::Observe;
    case idem::policy::CrossKeyMode::Hold: return CrossKey::Mode::Hold;
    case idem::policy::CrossKeyMode::Reject: return CrossKey::Mode::Reject;
  }
  return CrossKey::Mode::Off;
}

idem::sim::Usec usec(std::chrono::milliseconds d) { return d.count() * idem::sim::kUsecPerMs; }

/// The scenario with the server side of one tier: how long its keys live, how long a silent
/// executor keeps one, and what it does with the same request under another key.
idem::sim::SimConfig forTier(idem::sim::SimConfig c, const idem::policy::Tier& t) {
  c.store.ttl = usec(t.ttl);
  c.store.lease = usec(t.lease);
  c.store.crossKey.mode = simMode(t.crossKey.mode);
  if (t.crossKey.on()) c.store.crossKey.window = usec(t.crossKey.window);
  return c;
}

struct TierRun {
  const idem::policy::Tier* tier;
  idem::sim::Result result;
};

std::string perMillion(std::int64_t n, std::int64_t operations) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", operations == 0 ? 0.0 : 1e6 * static_cast<double>(n) / static_cast<double>(operations));
  return text;
}

}  // namespace

int simulateTiers(const idem::sim::SimConfig& config, const std::string& policyPath, const std::string& format,
                  std::ostream& out, std::ostream& err) {
  idem::policy::Policy policy;
  try {
    policy = idem::policy::loadPolicyFile(policyPath);
  } catch (const idem::policy::PolicyError& e) {
    err << "idemctl simulate: --tiers: " << e.what() << '\n';
    return 2;
  }
  std::vector<TierRun> runs;
  for (const auto& tier : policy.tiers) runs.push_back({&tier, idem::sim::simulate(forTier(config, tier))});

  if (format == "json") {
    auto list = nlohmann::json::array();
    for (const auto& [tier, r] : runs) {
      nlohmann::json row = {{"tier", tier->name},
                            {"ttl", idem::policy::formatDuration(tier->ttl)},
                            {"cross_key", {{"mode", idem::sim::crossKeyModeName(r.config.store.crossKey.mode)},
                                           {"window", idem::sim::formatDuration(r.config.store.crossKey.window)}}},
                            {"operations", r.operations},
                            {"duplicates", r.duplicates},
                            {"duplicates_new_key", r.duplicatesNewKey},
                            {"cross_key_matches", r.crossKey.matches},
                            {"legitimate_refused", r.crossKey.legitimateRefused}};
      if (r.counterpart)
        row["counterpart"] = {{"mode", idem::sim::crossKeyModeName(r.counterpart->mode)},
                              {"duplicates", r.counterpart->duplicates},
                              {"legitimate_refused", r.counterpart->legitimateRefused}};
      list.push_back(row);
    }
    out << nlohmann::json{{"policy", policyPath}, {"tiers", list}}.dump(2) << '\n';
    return 0;
  }
  out << "Each tier of " << policyPath << " against the same clients (" << config.clients.operations
      << " operations). Duplicates are executions beyond the first, per million operations.\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-16s %-8s %-16s %12s %14s %22s\n", "tier", "ttl", "cross_key", "duplicates/M",
                "of them: new key", "detection other way/M");
  out << line;
  for (const auto& [tier, r] : runs) {
    const std::string detection =
        tier->crossKey.on() ? std::string(idem::policy::crossKeyModeName(tier->crossKey.mode)) + " " +
                                  idem::policy::formatDuration(tier->crossKey.window)
                            : "off";
    const std::string other =
        r.counterpart ? perMillion(r.counterpart->duplicates, r.operations) + " (" +
                            std::string(idem::sim::crossKeyModeName(r.counterpart->mode)) + ")"
                      : "-";
    std::snprintf(line, sizeof line, "%-16s %-8s %-16s %12s %14s %22s\n", tier->name.c_str(),
                  idem::policy::formatDuration(tier->ttl).c_str(), detection.c_str(),
                  perMillion(r.duplicates, r.operations).c_str(), perMillion(r.duplicatesNewKey, r.operations).c_str(),
                  other.c_str());
    out << line;
  }
  out << "\n\"detection other way\": the same run with cross_key off where the tier detects, or in hold where it "
         "does not (present when the clients make new keys for retries, or something retries the same request).\n";
  return 0;
}

}  // namespace idemctl
