#pragma once
// The sweeper (docs/design.md §3): archives expired keys and purges what is past its retention, in
// batches that lock with SKIP LOCKED, so several sweepers may run at once against one store.
// The SQL lives in resources/migrations/0003_sweeper.sql; this is the loop around it.
#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/store/pg.h"

namespace idem::store {

using Millis = std::chrono::milliseconds;

/// How long archived generations of one tier of one service are kept (the tier's
/// archive_retention in that service's policy).
struct TierRetention {
  std::string tier;
  Millis retention{0};
  /// The tier's body_retention: archived bodies older than this are dropped (rows stay).
  std::optional<Millis> body;
  /// Whose keys: "" for every service (a policy file given to `idemctl sweep --policy`).
  std::string service = {};
};

/// Where the retentions came from and what they are.
struct Retentions {
  std::vector<TierRetention> tiers;
  /// For keys whose tier the policy does not name (a tier removed since the key was written).
  Millis fallback{std::chrono::hours(24 * 400)};
  /// "policy version 3 in the store", "policy.json", "built-in default".
  std::string source;
  /// Chosen policies that could not give retentions and were passed over, each with why (the
  /// sweep goes on with the choice before it): for the operator's log.
  std::vector<std::string> skipped;

  /// The longest retention of any tier (and the fallback): events older than this whose
  /// generation is gone are purged.
  [[nodiscard]] Millis longest() const;
};

/// The retention used for keys of tiers no policy names: the policy file's default (400d).
inline constexpr Millis kDefaultArchiveRetention{std::chrono::hours(24 * 400)};

/// The policy cannot give retentions (bad document or duration). what() names the field.
class RetentionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Retentions from the policies in force: per service, the newest choice in
/// idem.policy_choices whose document gives retentions (one that does not is skipped and listed
/// in `skipped`: it never stops a sweep). Each service's keys follow its own policy's tiers,
/// even where two services name a tier alike. When nothing is chosen, every tier gets
/// kDefaultArchiveRetention (source "built-in default"). Rows the service appends to
/// idem.policies are never read here.
[[nodiscard]] Retentions retentionsInForce(pg::Connection& conn);

/// Retentions from a policy document (JSON as in docs/design.md §4: tiers[].name, archive_retention,
/// which defaults to 400d, and the optional body_retention), for `service`'s keys ("": every
/// service's). Throws RetentionError naming `source` and the field.
[[nodiscard]] Retentions retentionsFromPolicy(const std::string& documentJson, const std::string& source,
                                              const std::string& service = "");

struct SweepOptions {
  int batch = 1000;              // rows per statement (per transaction)
  Retentions retentions;
  /// Stop starting new batches after this much (wall-clock) time; zero = until done.
  Millis budget{0};
  bool archive = true;           // archive expired keys
  bool dropBodies = true;        // drop archived bodies past their tier's body_retention
  bool purgeArchive = true;      // delete archived generations past purge_after
  bool purgeEvents = true;       // delete events older than the longest retention
  /// Checked between batches: set it from another thread (or a signal handler) to stop early.
  const std::atomic<bool>* stop = nullptr;
  /// The longest wait of a batch for a table lock someone holds (pg::QueryError 55P03 past it);
  /// zero: wait as long as PostgreSQL does. Set per batch transaction, never on the session:
  /// behind a pooler in transaction mode a session setting would reach other clients.
  Millis lockTimeout{0};
};

struct UnarchivableKey {
  std::string tenant;
  std::string endpoint;
  std::string key;
  std::string service = {};
  int generation = 0;
  int archivedGeneration = 0;
};

struct SweepReport {
  long long archived = 0;      // keys moved to the archive
  long long bodiesDropped = 0; // archived generations whose stored body was dropped
  long long purged = 0;        // archived generations deleted
  long long eventsPurged = 0;  // events deleted
  int batches = 0;             // statements run
  bool complete = true;        // false when the budget or stop flag ended the run with work left
  Millis elapsed{0};
  /// Expired live keys left live because their generation is already archived (two executions
  /// under one generation number, from before schema 14): listed for the operator, never dropped.
  std::vector<UnarchivableKey> unarchivable;
};

/// Runs batches (archive, drop old archived bodies, purge archive, purge events) until each has nothing left
/// or the budget ends. Every batch is its own transaction: what is done stays done if the
/// process stops. Throws pg::Unavailable / pg::QueryError.
SweepReport sweep(pg::Connection& conn, const SweepOptions& options);

/// One archive batch: archives up to `limit` expired keys and returns how many.
int sweepArchiveBatch(pg::Connection& conn, int limit, const Retentions& retentions);
/// Up to `limit` expired keys the archive batches leave alone (see SweepReport::unarchivable).
std::vector<UnarchivableKey> unarchivableKeys(pg::Connection& conn, int limit);
/// One body batch: drops the stored bodies of up to `limit` archived generations of `t.tier`
/// (of `t.service`, or every service's) archived at least `t.body` ago, and returns how many.
int dropBodiesBatch(pg::Connection& conn, int limit, const TierRetention& t);
/// One purge batch: deletes up to `limit` archived generations past purge_after.
int purgeArchiveBatch(pg::Connection& conn, int limit);
/// One event purge batch: deletes up to `limit` events older than `olderThan` whose
/// generation is no longer stored.
int purgeEventsBatch(pg::Connection& conn, int limit, Millis olderThan);

}  // namespace idem::store
