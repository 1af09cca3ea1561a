#pragma once
// The SQL behind the tiers analysis, one function per query. Not API: analyse() and whatIf()
// are. Every statement takes bound parameters only.
#include <map>
#include <string>
#include <vector>

#include "core/store/pg.h"
#include "core/tiers/tiers.h"

namespace idem::tiers::internal {

/// Per tier (events.tier): operations, retries by outcome and the offset percentiles over the
/// events at or after now() - since.
[[nodiscard]] std::map<std::string, RetryStats> retryStats(pg::Connection& conn, const std::string& service,
                                                          Millis since);

/// Per tier (or only `tier` when given) and for each ttl (ascending, distinct): how many of its
/// retries came at or after it. Tiers without retries are absent. One pass over the offsets.
[[nodiscard]] std::map<std::string, std::vector<long long>> lateCounts(pg::Connection& conn,
                                                                       const std::string& service,
                                                                       const std::string* tier, Millis since,
                                                                       const std::vector<Millis>& ttls);

struct TableSizes {
  double keysBytes = 0;
  double archiveBytes = 0;
  double keysEstimatedRows = 0;     // pg_class.reltuples (-1 or 0 when never analysed)
  double archiveEstimatedRows = 0;
  long long nowMs = 0;              // the database's now(): the report's time
};
[[nodiscard]] TableSizes tableSizes(pg::Connection& conn);

struct TierStorage {
  std::map<std::string, Storage> tiers;
  double tableAvgRowBytes = 0;  // idem.keys' size / rows: the price of a row of a tier with none yet
};
/// Per tier of `service`: rows and bytes in idem.keys and idem.key_archive, from the sizes above
/// and a sample of the rows (all of them for tables under a few hundred thousand rows).
[[nodiscard]] TierStorage storageByTier(pg::Connection& conn, const std::string& service, const TableSizes& sizes);

}  // namespace idem::tiers::internal
