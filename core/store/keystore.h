#pragma once
// The key records: claim, complete, release. A replay is one read and a fresh key one INSERT
// (which of the two is tried first is this process's guess, RecentKeys); completion one
// statement. The rare cases call idem.claim, the full decision. Every statement is in
// core/store/keysql.h, which says where each rule lives. The database's now() is the only clock.
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/http/headers.h"
#include "core/store/pool.h"
#include "core/store/recentkeys.h"
#include "core/store/replaybodies.h"
#include "core/store/servicename.h"

namespace idem::store {

using Millis = std::chrono::milliseconds;

/// Epoch milliseconds as read from the database clock.
using DbTime = long long;

/// A key's identity. The service is part of it: the same tenant, endpoint and key in two
/// services are two keys, and one never replays the other's answer.
struct Scope {
  std::string tenant;
  std::string endpoint;  // "POST /v1/payments"
  std::string key;
  std::string service = kDefaultService;
};

/// The one order in which a statement that writes several keys locks them (byte order, SQL's
/// COLLATE "C"): claim and completion batches send their keys sorted by it, lease renewals lock
/// in it (migration 0028's idem.renew_leases), so two of them never wait on each other's rows
/// in a cycle (a deadlock PostgreSQL would break only after deadlock_timeout, failing one).
inline bool locksBefore(const Scope& a, const Scope& b) {
  return std::tie(a.tenant, a.endpoint, a.key, a.service) < std::tie(b.tenant, b.endpoint, b.key, b.service);
}
inline bool sameScope(const Scope& a, const Scope& b) {
  return a.tenant == b.tenant && a.endpoint == b.endpoint && a.key == b.key && a.service == b.service;
}

/// A fresh claim that also looks for another key's execution of the same request (a tier's
/// `cross_key`, docs/policy.md "Duplicates across keys"): same service, tenant, endpoint and
/// fingerprint, inside `window`.
struct CrossKeyCheck {
  Millis window{0};
  bool blocks = false;     // hold or reject: a match is not claimed (Decision::Duplicate)
  bool rejects = false;    // reject (else hold): for the record only; the store treats both alike
  bool confirmed = false;  // the client sent Idempotency-Duplicate-Confirmed: ?1 (a match still runs)
};

/// The earlier execution a request matched.
struct CrossKeyMatch {
  std::string key;
  DbTime at = 0;                       // when that key claimed its execution
  std::string state;                   // its row now: "processing" or "done"; empty once swept
  int status = 0;                      // its stored answer's status (done)
  std::optional<std::string> resource; // what it created, when the executor named it
};

struct ClaimRequest {
  Scope scope;
  std::string fingerprint;  // raw digest bytes
  std::string tier;
  int policyVersion = 0;    // 0: none recorded
  Millis ttl{0};
  Millis lease{0};
  bool rejectExpired = false;
  Millis archiveRetention{0};
  std::string requestId;
  std::optional<CrossKeyCheck> crossKey;  // set on tiers with cross_key on
  /// Its fresh claim was tried already and claimed nothing (claimWithoutWaiting): go to the read.
  bool freshTried = false;
};

/// Duplicate: the request matches another key's execution and the tier answers instead of
/// executing (cross_key hold or reject); nothing was claimed.
enum class Decision { Execute, ExecuteAfterExpiry, Takeover, Replay, Conflict, Mismatch, RejectedExpired, Duplicate };
[[nodiscard]] const char* decisionName(Decision d);

struct StoredResponse {
  int status = 0;
  http::Headers headers;
  std::string body;
};

struct ClaimResult {
  Decision decision = Decision::Execute;
  int generation = 0;
  std::optional<DbTime> expiresAt;  // absent only when the key's last generation was swept
  std::optional<DbTime> leaseUntil;
  std::string leaseToken;           // set for Execute, ExecuteAfterExpiry, Takeover
  std::optional<StoredResponse> stored;  // set for Replay
  long long retryAfterMs = 0;       // set for Conflict
  DbTime now = 0;                   // the database's clock at the decision
  /// Another key's execution of the same request (only with ClaimRequest::crossKey): set for
  /// Duplicate, and for an Execute that ran although it matched (observe, or confirmed).
  std::optional<CrossKeyMatch> match;
  /// Replay of a body over kInlineReplayBody: its bytes, held in the replay budget
  /// (replaybodies.h) until the last copy of this is dropped; null for a body read inline.
  std::shared_ptr<const void> bodyHold;
  /// Replay whose large body was not read: the replay budget or its read slots had no room.
  /// `stored` is absent; answer 503 with Retry-After.
  bool bodyRefused = false;
};

/// A statement that must commit together with the completion (e.g. the payment's ledger row).
struct SideStatement {
  std::string sql;
  std::vector<pg::Param> params;
};

struct CompleteRequest {
  Scope scope;
  std::string leaseToken;
  StoredResponse response;
  std::optional<std::string> resourceRef;
  double latencyMs = 0;  // for the lease_lost row, when the completion comes too late
  std::string requestId;
};

struct CompleteResult {
  bool stored = false;  // false: the lease was taken over meanwhile; nothing stored
  int generation = 0;
  DbTime expiresAt = 0;
  DbTime now = 0;  // the database's clock at the completion: the execution's trace time
};

/// A lease an executor holds while it runs.
struct LeaseHold {
  Scope scope;
  std::string token;
  Millis lease{0};
};

/// What a lease_lost row's detail says became of the late execution's work (explain reads it:
/// work that committed with the key was rolled back, so it left nothing behind). The store
/// appends "; resource <id>" when the late execution named the resource it created.
inline constexpr std::string_view kLeaseLostNotStored = "completed after the lease was taken over; response not stored";
inline constexpr std::string_view kLeaseLostRolledBack = "completed after the lease was taken over; rolled back";
inline constexpr std::string_view kDetailResource = "; resource ";
/// An outcome_unknown row's detail when the key was taken over from a holder that stopped and the
/// tier's on_takeover answered "outcome unknown" instead of running it: the row stands for the
/// stopped holder's request, not for a second execution (explain counts none).
inline constexpr std::string_view kNotRunAfterTakeover =
    "not run again: taken over from a holder that stopped; its request may have run";

/// How the write path batched (core/store/keybatches.h): statements sent, and the keys they
/// carried; keys / statements is the mean batch.
struct WriteBatchStats {
  long long claimBatches = 0, claimedKeys = 0;
  long long completionBatches = 0, completedKeys = 0;
  long long claimsWaiting = 0, completionsWaiting = 0;  // queued now behind the batch in flight
  long long claimSlots = 0, completionSlots = 0;        // batches each lane may have in flight now
};

/// Statements of each kind (fresh claims, completions) a process keeps in flight at most before
/// new ones queue into the next batch. A commit waits for its WAL flush, and the server flushes
/// concurrent commits together: on a slow flush every slot carries keys; on a quick one fewer
/// in flight batch more (keybatches.cpp: measured).
inline constexpr std::size_t kWriteBatchesInFlight = 8;

/// How the write path batches. inFlight 0: each lane finds its count between 1 and
/// kWriteBatchesInFlight from its own keys/s (inflighttuner.h); otherwise that many, fixed.
struct WriteBatching {
  std::size_t inFlight = 0;
};

class KeyBatches;
class AsyncKeyBatches;

class KeyStore {
 public:
  /// `recent`: where the guess of the claim's order comes from; the process's table by default.
  /// `batching`: how many write statements go at once (adapting by default).
  explicit KeyStore(Pool& pool, RecentKeys& recent = RecentKeys::shared(), WriteBatching batching = {});
  ~KeyStore();
  KeyStore(const KeyStore&) = delete;
  KeyStore& operator=(const KeyStore&) = delete;

  /// Decides a request against the key's record. Throws pg::Unavailable.
  [[nodiscard]] ClaimResult claim(const ClaimRequest& request);
  /// Stores the response; sameTransaction statements commit with it or not at all. Writes no
  /// trace row for the execution: the caller queues it (the enforcer does).
  [[nodiscard]] CompleteResult complete(const CompleteRequest& request,
                                        const std::vector<SideStatement>& sameTransaction = {});
  /// Renews the leases this process holds, in one statement; returns the tokens still held
  /// (a lease taken over, completed or released is not renewed). Throws pg::Unavailable.
  [[nodiscard]] std::vector<std::string> renewLeases(const std::vector<LeaseHold>& holds);
  /// The write path an event loop drives (asynckeybatches.h), for the calls below; null: none.
  /// Set it before the first request; it must outlive the store's use of it.
  void setWritesWithoutWaiting(AsyncKeyBatches* writes) { m_async = writes; }
  [[nodiscard]] bool writesWithoutWaiting() const { return m_async != nullptr; }
  /// claim() for a caller that parks no thread, when a statement can decide it: a key this
  /// process takes for new (the guess claim() makes too), with the write path set. false: only
  /// claim() decides this key (nothing was sent). true: `done` runs once, on the write path's
  /// strand, with the key claimed as new, or nullopt and the error if any — then claim() decides
  /// it, told with ClaimRequest::freshTried when the claim made nothing.
  using ClaimedWithoutWaiting = std::function<void(std::optional<ClaimResult> claimed, std::exception_ptr error)>;
  [[nodiscard]] bool claimWithoutWaiting(const ClaimRequest& request, ClaimedWithoutWaiting done);
  /// Whether claimWithoutWaiting() would take a claim of this key (asked before the request's
  /// fingerprint is computed, so a key it would not take is not fingerprinted twice).
  [[nodiscard]] bool claimsWithoutWaiting(const Scope& scope) const;
  /// complete() without side statements for a caller that parks no thread. false: no write path
  /// set. true: `done` runs once, on the write path's strand, with the response stored, or
  /// nullopt and the error if any — then complete() decides it (a lost lease, a retry).
  using CompletedWithoutWaiting = std::function<void(std::optional<CompleteResult> stored, std::exception_ptr error)>;
  [[nodiscard]] bool completeWithoutWaiting(const CompleteRequest& request, CompletedWithoutWaiting done);

  /// Gives the claim back (failure before execution): nothing is stored.
  bool release(const Scope& scope, const std::string& leaseToken, int status, const std::string& requestId,
               const std::string& reason);

  /// Bounds the replays' large bodies (replaybodies.h); without one they are read unbounded.
  void setReplayBodies(ReplayBodies* bodies) { m_bodies = bodies; }
  [[nodiscard]] ReplayBodies* replayBodies() const { return m_bodies; }

  [[nodiscard]] Pool& pool() { return m_pool; }
  /// Claims decided, and the statements they took (1 when the guess of the order was right).
  [[nodiscard]] long long claims() const { return m_claims.load(); }
  [[nodiscard]] long long claimRoundTrips() const { return m_roundTrips.load(); }
  /// Whether a key this process has not seen is read before it is claimed (learned: see
  /// RecentKeys::readUnseenFirst).
  [[nodiscard]] bool readsUnseenKeysFirst() const { return m_recent.readUnseenFirst(); }
  [[nodiscard]] WriteBatchStats writeBatches() const;

 private:
  Pool& m_pool;
  RecentKeys& m_recent;
  std::unique_ptr<KeyBatches> m_batches;  // fresh claims and completions, batched across requests
  AsyncKeyBatches* m_async = nullptr;     // the same for callers that wait on no thread
  ReplayBodies* m_bodies = nullptr;
  [[nodiscard]] ClaimResult claimOnce(const ClaimRequest& request, std::size_t& largeBody);
  /// Reads a large stored body under the replay budget; false when the generation is gone.
  [[nodiscard]] bool readLargeBody(const ClaimRequest& request, ClaimResult& replay, std::size_t bytes);
  std::atomic<long long> m_claims{0};
  std::atomic<long long> m_roundTrips{0};
};

}  // namespace idem::store
