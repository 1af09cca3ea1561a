#include "core/gate/durabilityreport.h"

namespace idem::gate {

using nlohmann::json;

namespace {
bool asksSynchronous(const policy::Tier& t) { return t.durability == policy::DurabilityNeed::Synchronous; }
}  // namespace

json durabilityStoreJson(const store::Durability& d) {
  json out{{"level", store::levelName(d.level)},
           {"synchronous", d.synchronous()},
           {"meaning", d.meaning()},
           {"synchronous_commit", d.synchronousCommit},
           {"synchronous_standby_names", d.synchronousStandbyNames},
           {"standbys", d.standbys},
           // null: this role cannot see pg_stat_replication's sync_state (pg_read_all_stats can)
           {"sync_standbys", d.syncStandbys >= 0 ? json(d.syncStandbys) : json(nullptr)},
           {"replay_lag_s", d.replayLagS ? json(*d.replayLagS) : json(nullptr)}};
  if (d.dataAgeS) out["data_age_s"] = *d.dataAgeS;
  out["server"] = d.server;
  json nodes = json::array();
  for (const auto& n : d.standbyList)
    nodes.push_back({{"name", n.name},
                     {"address", n.address},
                     {"sync_state", n.syncState.empty() ? json(nullptr) : json(n.syncState)},
                     {"replay_lag_s", n.replayLagS ? json(*n.replayLagS) : json(nullptr)}});
  out["standby_nodes"] = std::move(nodes);
  return out;
}

json durabilityJson(const store::Durability& d, const policy::Policy& policy, const enforce::DurabilityGate& gate) {
  json out = durabilityStoreJson(d);
  const auto counts = gate.counts();
  json tiers = json::array();
  for (const auto& t : policy.tiers) {
    if (!asksSynchronous(t)) continue;
    const auto c = counts.find(t.name);
    tiers.push_back({{"tier", t.name},
                     {"requires", policy::durabilityNeedName(t.durability)},
                     {"on_weaker_store", policy::onWeakerStoreName(t.onWeakerStore)},
                     {"met", d.synchronous()},
                     {"refused", c == counts.end() ? 0 : c->second.refused},
                     {"served_weaker", c == counts.end() ? 0 : c->second.servedWeaker}});
  }
  out["tiers"] = std::move(tiers);
  return out;
}

std::vector<std::string> durabilityWarnings(const store::Durability& d, const policy::Policy& policy) {
  std::vector<std::string> out;
  for (const auto& t : policy.tiers)
    if (auto s = enforce::durabilityShortfall(t, d); !s.empty())
      out.push_back(s + (t.onWeakerStore == policy::OnWeakerStore::Refuse ? "; its routes answer 503"
                                                                          : "; served anyway (on_weaker_store: warn)"));
  return out;
}

std::string durabilityMetrics(const std::optional<store::Durability>& d, const policy::Policy& policy,
                              const enforce::DurabilityGate& gate) {
  std::string out;
  if (d) {
    out += "# HELP idem_store_durability_synchronous 1 when a commit is acknowledged only once a synchronous standby has it.\n"
           "# TYPE idem_store_durability_synchronous gauge\n"
           "idem_store_durability_synchronous " + std::string(d->synchronous() ? "1" : "0") + "\n"
           "# HELP idem_store_standbys Standbys streaming from the store (pg_stat_replication).\n"
           "# TYPE idem_store_standbys gauge\n"
           "idem_store_standbys " + std::to_string(d->standbys) + "\n";
    if (d->replayLagS)
      out += "# HELP idem_store_replay_lag_seconds Largest replay lag of the store's standbys: what a failover to an asynchronous one can forget.\n"
             "# TYPE idem_store_replay_lag_seconds gauge\n"
             "idem_store_replay_lag_seconds " + std::to_string(*d->replayLagS) + "\n";
  }
  const auto counts = gate.counts();
  std::string met, refused, weaker;
  for (const auto& t : policy.tiers) {
    if (!asksSynchronous(t)) continue;
    const std::string label = "{tier=\"" + t.name + "\"}";
    if (d) met += "idem_tier_durability_met" + label + (d->synchronous() ? " 1\n" : " 0\n");
    const auto c = counts.find(t.name);
    refused += "idem_durability_refused_total" + label + " " + std::to_string(c == counts.end() ? 0 : c->second.refused) + "\n";
    weaker += "idem_durability_served_weaker_total" + label + " " +
              std::to_string(c == counts.end() ? 0 : c->second.servedWeaker) + "\n";
  }
  if (refused.empty()) return out;
  if (!met.empty())
    out += "# HELP idem_tier_durability_met 1 when the store gives the durability the tier requires.\n"
           "# TYPE idem_tier_durability_met gauge\n" + met;
  out += "# HELP idem_durability_refused_total Requests refused because the store is weaker than their tier requires.\n"
         "# TYPE idem_durability_refused_total counter\n" + refused +
         "# HELP idem_durability_served_weaker_total Requests served on a store weaker than their tier requires (on_weaker_store: warn).\n"
         "# TYPE idem_durability_served_weaker_total counter\n" + weaker;
  return out;
}

}  // namespace idem::gate
