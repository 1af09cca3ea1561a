// idemctl status: what the store promises about an acknowledged key — its replication setup
// read read-only (store::probeDurability) and said in words — and, with --policy, whether each
// tier's `durability` setting is met; and the services that share the store, each with its
// policy. Exit 1 when a tier's setting is not met.
#include <iostream>

#include "app/idemctl/command.h"
#include "core/gate/durabilityreport.h"
#include "core/policy/policy.h"
#include "core/store/durability.h"
#include "core/store/migrations.h"
#include "core/store/serviceregistry.h"

namespace {

constexpr const char* kUsage = "[--db CONNINFO] [--policy FILE] [--format text|json]";

int runStatus(const idemctl::Args& args) {
  const std::string format = args.get("format", "text");
  if (format != "text" && format != "json")
    return idemctl::usageError("status", kUsage, "--format: \"" + format + "\" is not text or json");
  std::optional<idem::policy::Policy> policy;
  try {
    if (args.has("policy")) policy = idem::policy::loadPolicyFile(args.get("policy"));
  } catch (const std::exception& e) {
    return idemctl::usageError("status", kUsage, e.what());
  }
  idem::store::Durability d;
  std::vector<idem::store::ServiceRecord> services;
  try {
    idem::pg::Connection conn(idemctl::conninfo(args));
    d = idem::store::probeDurability(conn);
    // Services are recorded from schema 25 on; an older store has one, unnamed.
    if (idem::store::appliedSchemaVersion(conn) >= 25) services = idem::store::knownServices(conn);
  } catch (const idem::pg::Unavailable& e) {
    std::cerr << "idemctl status: " << e.what() << "\nCheck --db or the PG* variables.\n";
    return idemctl::kUnavailable;
  }
  // One sentence per tier whose durability setting this store does not meet.
  const std::vector<std::string> shortfalls =
      policy ? idem::gate::durabilityWarnings(d, *policy) : std::vector<std::string>{};
  if (format == "json") {
    auto out = idem::gate::durabilityStoreJson(d);
    out["warnings"] = shortfalls;
    auto list = nlohmann::json::array();
    for (const auto& s : services)
      list.push_back({{"service", s.name}, {"policy_version", s.lastPolicyVersion}, {"policy_in_force", s.chosenVersion}});
    out["services"] = list;
    std::cout << out.dump() << '\n';
  } else {
    std::cout << "server: " << d.server << (d.level == idem::store::Durability::Level::Standby ? " (standby)" : " (primary)")
              << "\ndurability: " << idem::store::levelName(d.level) << "\n  " << d.meaning() << "\n"
              << "synchronous_commit: " << d.synchronousCommit << "\nsynchronous_standby_names: "
              << (d.synchronousStandbyNames.empty() ? "(none)" : d.synchronousStandbyNames) << "\nstandbys: "
              << d.standbys;
    if (d.syncStandbys >= 0) std::cout << " (" << d.syncStandbys << " synchronous)";
    else if (d.standbys > 0) std::cout << " (which are synchronous: this role cannot see; grant pg_read_all_stats)";
    std::cout << '\n';
    for (const auto& n : d.standbyList) {
      std::cout << "  " << n.name << " from " << n.address << ": " << (n.syncState.empty() ? "?" : n.syncState);
      if (n.replayLagS) std::cout << ", replay lag " << *n.replayLagS << " s";
      std::cout << '\n';
    }
    if (d.replayLagS) std::cout << "replay lag: " << *d.replayLagS << " s\n";
    std::cout << "services: " << (services.empty() ? "none started yet" : std::to_string(services.size())) << '\n';
    for (const auto& s : services)
      std::cout << "  " << s.name << ": started with policy version " << s.lastPolicyVersion << ", in force "
                << (s.chosenVersion ? "version " + std::to_string(s.chosenVersion) : std::string("none chosen"))
                << '\n';
    for (const auto& s : shortfalls) std::cout << "WARNING: " << s << '\n';
    if (policy && shortfalls.empty()) std::cout << "every tier's durability setting is met\n";
  }
  return shortfalls.empty() ? idemctl::kOk : idemctl::kFailure;
}

}  // namespace

IDEMCTL_COMMAND("status", "what the store promises about an acknowledged key (replication, durability per tier)",
                kUsage,
                {idemctl::dbFlag(),
                 idemctl::Flag::option("policy", "FILE",
                                       "Judge each tier of this policy against the store's durability.",
                                       "the store's findings alone"),
                 idemctl::Flag::option("format", "text|json", "How the report is written.", "text")},
                runStatus);
