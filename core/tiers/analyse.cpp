// analyse() and whatIf(): the queries, read in one snapshot, turned into a report per tier.
#include <algorithm>

#include "core/store/policystore.h"
#include "core/store/transaction.h"
#include "core/tiers/queries.h"
#include "core/tiers/tiers.h"

namespace idem::tiers {
namespace {

/// The TTLs every tier's curve is computed at: the ladder plus every TTL the report names
/// (each tier's TTL, recommendation, windows and candidate), so one query serves all tiers.
std::vector<Millis> gridFor(const std::vector<TierReport>& tiers, const Options& options) {
  std::vector<Millis> grid = ttlLadder();
  for (const auto& t : tiers) {
    grid.push_back(t.tier.ttl);
    grid.push_back(t.recommendation.ttl);
    for (const auto& [name, window] : t.tier.referenceWindows) grid.push_back(window);
  }
  for (const auto& [name, ttl] : options.candidates) grid.push_back(ttl);
  std::erase_if(grid, [](Millis d) { return d <= Millis(0); });
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  return grid;
}

Storage storageFor(const internal::TierStorage& all, const std::string& tier) {
  auto it = all.tiers.find(tier);
  Storage s = it == all.tiers.end() ? Storage{} : it->second;
  if (s.liveRows <= 0) s.avgRowBytes = all.tableAvgRowBytes;
  return s;
}

}  // namespace

Report analyse(pg::Connection& conn, const Options& options) {
  // One snapshot for every query of the report: the same now(), the same rows; one transaction
  // keeps a pooler in transaction mode happy. Inside the console's read-only job, that one.
  auto snapshot = pg::Transaction::joinOrBegin(conn, pg::Transaction::Mode::ReadOnlySnapshot);
  auto recorded = store::policyInForce(conn, options.service);
  if (!recorded)
    throw NoPolicy(
        (options.service == store::kDefaultService ? std::string("no policy is chosen in this store yet")
                                                   : "no policy is chosen for service " + options.service + " yet") +
        ": tiers come from the policy in force, which the admin chooses with `idemctl policy activate VERSION|FILE"
        " --service NAME` (a first start by the admin or the owner chooses its own)");
  Report report;
  report.service = options.service;
  report.policyVersion = recorded->version;
  report.policyEffectiveAtMs = recorded->effectiveAtMs;
  report.since = options.since;

  const auto sizes = internal::tableSizes(conn);
  report.generatedAtMs = sizes.nowMs;
  const auto storage = internal::storageByTier(conn, options.service, sizes);
  const auto stats = internal::retryStats(conn, options.service, options.since);

  for (const auto& tier : recorded->policy.tiers) {
    TierReport t;
    t.tier = tier;
    t.service = options.service;
    if (auto it = stats.find(tier.name); it != stats.end()) t.retries = it->second;
    for (const auto& outcome : retryOutcomes()) t.retries.byOutcome.try_emplace(outcome, 0);
    t.storage = storageFor(storage, tier.name);
    t.recommendation = recommend(tier, t.retries);
    report.tiers.push_back(std::move(t));
  }

  const auto grid = gridFor(report.tiers, options);
  const auto late = internal::lateCounts(conn, options.service, nullptr, options.since, grid);
  for (auto& t : report.tiers) {
    auto it = late.find(t.tier.name);
    for (std::size_t i = 0; i < grid.size(); ++i)
      t.curve.push_back(evaluate(t.tier, t.retries, t.storage, grid[i], it == late.end() ? 0 : it->second[i]));
    t.current = *t.pointAt(t.tier.ttl);
    t.recommendation.cost = *t.pointAt(t.recommendation.ttl);
    auto candidate = options.candidates.find(t.tier.name);
    t.proposedFromCandidate = candidate != options.candidates.end() && candidate->second > Millis(0);
    t.proposed = *t.pointAt(t.proposedFromCandidate ? candidate->second : t.recommendation.ttl);
    t.flags = flagsFor(t.tier, t.retries, t.current);
  }
  snapshot.commit();
  return report;
}

WhatIf whatIf(pg::Connection& conn, const TierReport& tier, Millis ttl, Millis since) {
  const auto late = internal::lateCounts(conn, tier.service, &tier.tier.name, since, {ttl});
  const auto it = late.find(tier.tier.name);
  return evaluate(tier.tier, tier.retries, tier.storage, ttl, it == late.end() ? 0 : it->second.front());
}

}  // namespace idem::tiers
