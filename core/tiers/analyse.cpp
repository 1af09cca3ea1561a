// analyse() and whatIf(): the queries, read in one snapshot, turned into a report per tier.
#include <algorithm>

#include "core/store/policystore.h"
#include "core/tiers/queries.h"
#include "core/tiers/tiers.h"

namespace idem::tiers {
namespace {

/// The TTLs a tier's curve is computed at: the ladder plus every TTL the report names.
std::vector<Millis> gridFor(const policy::Tier& tier, Millis recommended, const std::optional<Millis>& candidate) {
  std::vector<Millis> grid = ttlLadder();
  grid.push_back(tier.ttl);
  grid.push_back(recommended);
  for (const auto& [name, window] : tier.referenceWindows) grid.push_back(window);
  if (candidate) grid.push_back(*candidate);
  std::erase_if(grid, [](Millis d) { return d <= Millis(0); });
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  return grid;
}

/// One snapshot for every query of a report: the same now(), the same rows. Read only, so it
/// also runs on a hot standby; a single transaction keeps PgBouncer's transaction mode happy.
class Snapshot {
 public:
  explicit Snapshot(pg::Connection& conn) : m_conn(conn) {
    m_conn.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }
  Snapshot(const Snapshot&) = delete;
  Snapshot& operator=(const Snapshot&) = delete;
  ~Snapshot() {
    try {
      m_conn.exec(m_committed ? "COMMIT" : "ROLLBACK");
    } catch (...) {  // the connection broke: the caller already has the exception that says so
    }
  }
  void commit() { m_committed = true; }

 private:
  pg::Connection& m_conn;
  bool m_committed = false;
};

Storage storageFor(const internal::TierStorage& all, const std::string& tier) {
  auto it = all.tiers.find(tier);
  Storage s = it == all.tiers.end() ? Storage{} : it->second;
  if (s.liveRows <= 0) s.avgRowBytes = all.tableAvgRowBytes;
  return s;
}

}  // namespace

Report analyse(pg::Connection& conn, const Options& options) {
  Snapshot snapshot(conn);
  auto recorded = store::policyInForce(conn);
  if (!recorded)
    throw NoPolicy("no policy is recorded in this store yet: tiers come from the policy an enforcer runs with "
                   "(start `idemctl serve --policy FILE` once, or the demo)");
  Report report;
  report.policyVersion = recorded->version;
  report.policyEffectiveAtMs = recorded->effectiveAtMs;
  report.since = options.since;

  const auto sizes = internal::tableSizes(conn);
  report.generatedAtMs = sizes.nowMs;
  const auto storage = internal::storageByTier(conn, sizes);
  const auto stats = internal::retryStats(conn, options.since);

  for (const auto& tier : recorded->policy.tiers) {
    TierReport t;
    t.tier = tier;
    if (auto it = stats.find(tier.name); it != stats.end()) t.retries = it->second;
    for (const auto& outcome : retryOutcomes()) t.retries.byOutcome.try_emplace(outcome, 0);
    t.storage = storageFor(storage, tier.name);
    t.recommendation = recommend(tier, t.retries);

    std::optional<Millis> candidate;
    if (auto it = options.candidates.find(tier.name); it != options.candidates.end() && it->second > Millis(0))
      candidate = it->second;
    const auto grid = gridFor(tier, t.recommendation.ttl, candidate);
    const auto late = t.retries.retries > 0 ? internal::lateCounts(conn, tier.name, options.since, grid)
                                            : std::vector<long long>(grid.size(), 0);
    for (std::size_t i = 0; i < grid.size(); ++i)
      t.curve.push_back(evaluate(tier, t.retries, t.storage, grid[i], late[i]));

    t.current = *t.pointAt(tier.ttl);
    t.recommendation.cost = *t.pointAt(t.recommendation.ttl);
    t.proposedFromCandidate = candidate.has_value();
    t.proposed = *t.pointAt(candidate.value_or(t.recommendation.ttl));
    t.flags = flagsFor(tier, t.retries, t.current);
    report.tiers.push_back(std::move(t));
  }
  snapshot.commit();
  return report;
}

WhatIf whatIf(pg::Connection& conn, const TierReport& tier, Millis ttl, Millis since) {
  const auto late = tier.retries.retries > 0 ? internal::lateCounts(conn, tier.tier.name, since, {ttl})
                                             : std::vector<long long>{0};
  return evaluate(tier.tier, tier.retries, tier.storage, ttl, late.front());
}

}  // namespace idem::tiers
