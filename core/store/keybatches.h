#pragma once
// The write path of new keys, batched across concurrent requests: fresh claims that arrive while
// every claim slot (up to kWriteBatchesInFlight) has a statement in flight go to the store together in
// the next one (one multi-row INSERT, one commit), and so do completions (one multi-row UPDATE).
// A batch is what queued while the earlier ones ran (BatchLane): no timer, so a lone request pays
// one single-row statement, as before. Each key keeps its own answer: a key the batch did not claim or complete (a live row,
// history, a lost lease) returns nullopt and its caller decides it alone; a statement that fails
// is split in halves and retried, so an error reaches only the keys that cause it. Every answer
// is given after its batch committed: a claim is durable before its execution starts.
#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <span>

#include "core/store/batchlane.h"
#include "core/store/keystore.h"
#include "core/store/pgarray.h"

namespace idem::store {

// A batch stays small enough that one statement's latency stays close to a single row's, and a
// batch of large responses does not become one huge message (both write paths: KeyBatches and
// AsyncKeyBatches).
inline constexpr std::size_t kMaxClaimsPerBatch = 128;
inline constexpr std::size_t kMaxCompletionsPerBatch = 128;
inline constexpr std::size_t kMaxCompletionBytesPerBatch = 1 << 20;

/// The parameters of kCompleteSql and kCompleteOrAbortSql for one key.
[[nodiscard]] std::vector<pg::Param> completeParams(const CompleteRequest& r);
/// A stored completion as a RETURNING row of those statements (or kCompletedBySql) reports it.
[[nodiscard]] CompleteResult completedRow(const pg::Result& r, int row);

/// Where a fresh claim's row (generation, expires_at, lease_token, lease_until, db_now) is.
struct FreshClaimColumns {
  int generation, expiresAt, leaseToken, leaseUntil, now;
  explicit FreshClaimColumns(const pg::Result& r);
};
/// A key claimed as new, from its row of a fresh claim's result.
[[nodiscard]] ClaimResult freshClaim(const pg::Result& r, const FreshClaimColumns& col, int row);

/// Claims as the parallel arrays a batch claim statement unnests, parameters $1..$10 in this
/// order: tenant, endpoint, key, fingerprint, tier, policy_version, ttl, lease, request_id, service.
class ClaimArrays {
 public:
  void add(const ClaimRequest& q);
  /// The eleven parameters; the builder is spent.
  [[nodiscard]] std::vector<pg::Param> take();

 private:
  pg::ArrayParam m_tenants{pg::Type::Text}, m_endpoints{pg::Type::Text}, m_keys{pg::Type::Text},
      m_fingerprints{pg::Type::Bytea}, m_tiers{pg::Type::Text}, m_versions{pg::Type::Int4},
      m_ttls{pg::Type::Interval}, m_leases{pg::Type::Interval}, m_requestIds{pg::Type::Text},
      m_services{pg::Type::Text}, m_sameRequestLatest{pg::Type::Bool};
};

/// The parameters of kFreshClaimSql (one key).
[[nodiscard]] std::vector<pg::Param> freshClaimParams(const ClaimRequest& q);
/// The parameters of kCompleteBatchSql for these completions, in their order.
[[nodiscard]] std::vector<pg::Param> completionBatchParams(std::span<const CompleteRequest* const> batch);
/// A claim batch's rows given to the requests they answer: result i for sent[i], nullopt for a
/// key it did not claim. Rows come back by key, not in the order they were sent.
[[nodiscard]] std::vector<std::optional<ClaimResult>> claimedRows(const pg::Result& r,
                                                                  std::span<const ClaimRequest* const> sent);
/// The same for a completion batch: nullopt for a key not processing under the sent token.
[[nodiscard]] std::vector<std::optional<CompleteResult>> completedRows(const pg::Result& r,
                                                                       std::span<const CompleteRequest* const> sent);
/// A failed batch statement is worth splitting to find the key that fails it: a store that
/// refuses everything for now (read-only after a failover, out of resources, shutting down)
/// refuses every half as well; a deadlock or serialization failure (class 40) may be between two
/// rows of the batch.
[[nodiscard]] bool worthSplitting(const pg::QueryError& e);

/// Sorts a batch into the one order statements lock keys in (locksBefore), so two processes'
/// batches never wait on each other in a cycle; returns the jobs that go to the statement. With
/// `eachKeyOnce`, a second request for a key in the batch is left out: it decides alone,
/// against the row the first one left. `JobPtr`: a raw or shared pointer to a job.
template <typename JobPtr, typename ScopeOf>
std::vector<JobPtr> inLockOrder(std::vector<JobPtr>& jobs, ScopeOf scopeOf, bool eachKeyOnce) {
  std::sort(jobs.begin(), jobs.end(),
            [&](const JobPtr& a, const JobPtr& b) { return locksBefore(scopeOf(*a), scopeOf(*b)); });
  std::vector<JobPtr> sent;
  sent.reserve(jobs.size());
  for (const JobPtr& j : jobs)
    if (!eachKeyOnce || sent.empty() || !sameScope(scopeOf(*sent.back()), scopeOf(*j))) sent.push_back(j);
  return sent;
}

/// One key's fresh claim by a single-row statement on `c`: nullopt when the key has a live row
/// or history (or a sweeper archived it meanwhile), or, with cross_key, when another key holds its
/// request's mark (claimSameRequest decides then). Throws like any statement.
[[nodiscard]] std::optional<ClaimResult> claimFreshOne(pg::Connection& c, const ClaimRequest& q);

class KeyBatches {
 public:
  KeyBatches(Pool& pool, WriteBatching batching);

  /// The key claimed as new (generation 1, leased to the caller), or nullopt: it decides alone.
  /// Throws what the key's statement threw.
  [[nodiscard]] std::optional<ClaimResult> claimFresh(const ClaimRequest& q);
  /// The response stored, or nullopt: the key is not processing under this token. Throws what
  /// the key's statement threw.
  [[nodiscard]] std::optional<CompleteResult> complete(const CompleteRequest& q);

  [[nodiscard]] WriteBatchStats stats() const;

  struct ClaimJob {
    const ClaimRequest* request;
    std::optional<ClaimResult> claimed;
    std::exception_ptr error;
  };
  struct CompletionJob {
    const CompleteRequest* request;
    std::optional<CompleteResult> stored;
    std::exception_ptr error;
  };

 private:
  void runClaims(std::vector<ClaimJob*>& jobs);
  void runCompletions(std::vector<CompletionJob*>& jobs);

  Pool& m_pool;
  InFlightLimit m_inFlight;  // claims' and completions' alike
  BatchLane<ClaimJob> m_claims;
  BatchLane<CompletionJob> m_completions;
  std::atomic<long long> m_claimBatches{0}, m_claimedKeys{0}, m_completionBatches{0}, m_completedKeys{0};
};

}  // namespace idem::store
