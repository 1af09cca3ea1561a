#pragma once
// Retention tiers against real retry behaviour (issue 5): for each tier of the policy in
// force, how late clients retry (from the event trace), what the tier's rows cost (from the
// tables' real size), and what another TTL would change. Qt-free; the SQL does the counting.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/policy/policy.h"
#include "core/tiers/confidence.h"
#include "core/store/pg.h"
#include "core/store/servicename.h"

namespace idem::tiers {

using policy::Millis;

/// Later requests to a key: the outcomes whose offsets make up the retry distribution.
[[nodiscard]] const std::vector<std::string>& retryOutcomes();

/// Offsets of retries from the key's first request, in milliseconds (percentile_cont).
struct Offsets {
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
};

struct RetryStats {
  long long operations = 0;  ///< first executions ('executed') in the period
  long long retries = 0;     ///< later requests (retryOutcomes()) with a known offset
  std::map<std::string, long long> byOutcome;
  std::optional<Offsets> offsets;  ///< nullopt when no retry was observed
};

/// What a tier's rows cost on disk: each table's pg_total_relation_size shared out by the
/// tiers' measured row sizes (pg_column_size), so indexes, TOAST and page overhead count.
struct Storage {
  double liveRows = 0;     ///< rows in idem.keys (unarchived, expired-but-unswept included)
  double liveBytes = 0;
  double archiveRows = 0;  ///< rows in idem.key_archive
  double archiveBytes = 0;
  double archiveBodyBytes = 0;  ///< of archiveBytes, the stored response bodies: what body_retention drops
  /// For each age of bodyRetentionLadder(): the stored bodies of generations archived within
  /// that age — what a body_retention of that age would keep (ascending ages).
  std::vector<std::pair<Millis, double>> archiveBodyBytesWithin;
  double avgRowBytes = 0;  ///< liveBytes / liveRows, or the table's average when the tier has none
  bool sampled = false;    ///< counts scaled up from a TABLESAMPLE of a large table
};

/// The outcome of running a tier with another TTL over the same trace.
struct WhatIf {
  Millis ttl{0};
  long long retries = 0;
  long long afterExpiry = 0;  ///< retries at or after ttl from their key's first request
  double missRate = 0;        ///< afterExpiry / retries
  double perMillion = 0;      ///< afterExpiry per million operations
  /// perMillion when the tier executes expired keys again (duplicates), else 0.
  double duplicatesPerMillion = 0;
  /// perMillion when the tier rejects expired keys (422, manual reconciliation), else 0.
  double rejectionsPerMillion = 0;
  double liveBytes = 0;  ///< live rows × average row size, scaled by ttl / current TTL
  double storageBytes = 0;  ///< liveBytes + archive (with bodies kept bodyRetention, when proposed)
  std::optional<Millis> bodyRetention;  ///< a proposed body retention (archiveBytesKeepingBodies)
  Interval missRateRange;    ///< 95 % Wilson range of missRate (afterExpiry of retries)
  Interval perMillionRange;  ///< 95 % Wilson range of perMillion (afterExpiry of operations)
  /// The tier's reference windows longer than ttl: a resend late in one finds the key gone,
  /// whether or not the trace caught one. Name and window, ascending by name.
  std::vector<std::pair<std::string, Millis>> exposures;
  [[nodiscard]] bool exposed() const { return !exposures.empty(); }
};

struct Recommendation {
  /// False below kMinRetriesToRecommend observed retries: then ttl is the tier's own and
  /// `because` says what was counted instead.
  bool made = true;
  Millis ttl{0};
  std::string because;  ///< in words: what it covers (or why there is no recommendation)
  WhatIf cost;
};

struct TierReport {
  policy::Tier tier;
  std::string service;  ///< whose tier (the what-if reads that service's trace)
  RetryStats retries;
  Storage storage;
  WhatIf current;     ///< at the tier's TTL
  Recommendation recommendation;
  WhatIf proposed;    ///< at the candidate TTL (Options::candidates), else the recommendation
  bool proposedFromCandidate = false;
  std::vector<std::string> flags;  ///< why the TTL is too short, in words; empty when it is not
  std::vector<WhatIf> curve;       ///< ascending TTLs: the ladder plus the TTLs named above
  [[nodiscard]] bool flagged() const { return !flags.empty(); }
  /// The curve's point at exactly ttl, if the curve has one.
  [[nodiscard]] const WhatIf* pointAt(Millis ttl) const;
};

struct Report {
  std::string service;  ///< whose policy in force the tiers are
  int policyVersion = 0;
  long long policyEffectiveAtMs = 0;
  long long generatedAtMs = 0;  ///< the database's now()
  Millis since{0};
  std::vector<TierReport> tiers;
  [[nodiscard]] const TierReport* tier(const std::string& name) const;
};

struct Options {
  Millis since{std::chrono::hours(24 * 30)};  ///< the period: events at or after now() - since
  std::map<std::string, Millis> candidates;   ///< tier -> TTL to evaluate as "proposed"
  std::string service = store::kDefaultService;  ///< whose policy, trace and keys
};

/// No policy was ever recorded in this store (nothing enforced yet).
class NoPolicy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reads the policy in force, the trace and the tables' sizes; everything per tier.
/// Throws NoPolicy, pg::QueryError, pg::Unavailable.
[[nodiscard]] Report analyse(pg::Connection& conn, const Options& options);

/// One what-if for any TTL (a typed value the curve does not hold): one query over the trace.
/// `since` is the period the tier's report was made for (its counts are the denominators).
[[nodiscard]] WhatIf whatIf(pg::Connection& conn, const TierReport& tier, Millis ttl, Millis since);

// ---- pure parts (no database), exposed for the views and the tests ----

/// The body retentions the what-if offers: 1 day … 2 years in round durations.
[[nodiscard]] const std::vector<Millis>& bodyRetentionLadder();
/// The tier's archive if stored bodies were kept only `keep` (an age of the ladder shorter
/// than the bodies are kept now): nullopt when the measurement cannot tell (another age, or
/// longer than now — bodies already dropped cannot be counted back).
[[nodiscard]] std::optional<double> archiveBytesKeepingBodies(const TierReport& tier, Millis keep);
/// The candidate TTLs a slider steps through: 1 s … 2 years in round durations.
[[nodiscard]] const std::vector<Millis>& ttlLadder();
/// The smallest duration a policy file writes in whole units (s below 2 min, min below 2 h,
/// h below 3 days, else days) that is >= d.
[[nodiscard]] Millis roundUpToPolicyUnit(Millis d);
/// Fills a what-if from the counts the trace gave and the tier's storage.
[[nodiscard]] WhatIf evaluate(const policy::Tier& tier, const RetryStats& retries, const Storage& storage, Millis ttl,
                              long long afterExpiry);
/// The smallest TTL that covers p99.9 of observed retries, every reference window and the lease;
/// none (made == false) below kMinRetriesToRecommend retries.
[[nodiscard]] Recommendation recommend(const policy::Tier& tier, const RetryStats& retries);
/// Why a tier's TTL is too short (retries' p99.9 or a reference window at or past it), in words.
[[nodiscard]] std::vector<std::string> flagsFor(const policy::Tier& tier, const RetryStats& retries,
                                                const WhatIf& current);
/// "12.4 MB", "850 kB", "0 B".
[[nodiscard]] std::string humanBytes(double bytes);
/// "20,000", "12.5", "0.42", "0".
[[nodiscard]] std::string humanPerMillion(double perMillion);
/// "0.41 %", "0 %", "< 0.01 %".
[[nodiscard]] std::string humanPercent(double share);
/// "a resend late in channel_retry (3 days) finds the key gone" for each exposure, joined; empty
/// when none.
[[nodiscard]] std::string exposureText(const WhatIf& w);

}  // namespace idem::tiers
