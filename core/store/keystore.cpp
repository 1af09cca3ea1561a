#include "core/store/keystore.h"

#include "core/store/asynckeybatches.h"

#include "core/policy/duration.h"
#include "core/store/crosskeyclaim.h"
#include "core/store/headercodec.h"
#include "core/store/keybatches.h"
#include "core/store/keysql.h"
#include "core/store/transaction.h"

namespace idem::store {
namespace {

using namespace sql;
using pg::Type;

// Each statement's columns, resolved and type-checked once per result (keysql.h's select lists).
struct ReplayColumns {
  int generation, expiresAt, status, headers, bodyBytes, body, now, replayable, syncDurable;
  explicit ReplayColumns(const pg::Result& r)
      : generation(r.column("generation", Type::Int4)),
        expiresAt(r.column("expires_at", Type::Timestamptz)),
        status(r.column("resp_status", Type::Int4)),
        headers(r.column("resp_headers", Type::Jsonb)),
        bodyBytes(r.column("body_bytes", Type::Int4)),
        body(r.column("resp_body", Type::Bytea)),
        now(r.column("db_now", Type::Timestamptz)),
        replayable(r.column("replayable", Type::Bool)),
        syncDurable(r.column("sync_durable", Type::Bool)) {}
};

struct ClaimColumns {
  int decision, generation, expiresAt, leaseToken, leaseUntil, status, headers, body, retryAfterMs, now;
  explicit ClaimColumns(const pg::Result& r)
      : decision(r.column("decision", Type::Text)),
        generation(r.column("generation", Type::Int4)),
        expiresAt(r.column("expires_at", Type::Timestamptz)),
        leaseToken(r.column("lease_token", Type::Uuid)),
        leaseUntil(r.column("lease_until", Type::Timestamptz)),
        status(r.column("resp_status", Type::Int4)),
        headers(r.column("resp_headers", Type::Jsonb)),
        body(r.column("resp_body", Type::Bytea)),
        retryAfterMs(r.column("retry_after_ms", Type::Int8)),
        now(r.column("db_now", Type::Timestamptz)) {}
};

Decision parseDecision(std::string_view s) {
  if (s == "execute") return Decision::Execute;
  if (s == "execute_after_expiry") return Decision::ExecuteAfterExpiry;
  if (s == "takeover") return Decision::Takeover;
  if (s == "replay") return Decision::Replay;
  if (s == "conflict") return Decision::Conflict;
  if (s == "mismatch") return Decision::Mismatch;
  return Decision::RejectedExpired;
}

// A stored answer is acknowledged only once it is as durable as the store promises
// (kAwaitDurableSql): every path that answers from a row it did not see committed goes through here.
void awaitDurable(pg::Connection& c) { (void)c.exec(kAwaitDurableSql); }

}  // namespace

KeyStore::KeyStore(Pool& pool, RecentKeys& recent, WriteBatching batching)
    : m_pool(pool), m_recent(recent), m_batches(std::make_unique<KeyBatches>(pool, batching)) {}

KeyStore::~KeyStore() = default;

WriteBatchStats KeyStore::writeBatches() const {
  WriteBatchStats s = m_batches->stats();
  if (m_async == nullptr) return s;
  const WriteBatchStats a = m_async->stats();
  s.claimBatches += a.claimBatches;
  s.claimedKeys += a.claimedKeys;
  s.completionBatches += a.completionBatches;
  s.completedKeys += a.completedKeys;
  s.claimsWaiting += a.claimsWaiting;
  s.completionsWaiting += a.completionsWaiting;
  // Where the keys go, the limit that says how they batch.
  if (a.claimedKeys + a.completedKeys > 0) {
    s.claimSlots = a.claimSlots;
    s.completionSlots = a.completionSlots;
  }
  return s;
}

bool KeyStore::claimsWithoutWaiting(const Scope& s) const {
  // The same guess as claimOnce(): a key seen here, or a process whose unseen keys were mostly
  // retries lately, reads first — on claim()'s path.
  return m_async != nullptr && !m_recent.contains(RecentKeys::tag(s.tenant, s.endpoint, s.key, s.service)) &&
         !m_recent.readUnseenFirst();
}

bool KeyStore::claimWithoutWaiting(const ClaimRequest& q, ClaimedWithoutWaiting done) {
  if (q.freshTried || !claimsWithoutWaiting(q.scope)) return false;
  const std::uint64_t tag = RecentKeys::tag(q.scope.tenant, q.scope.endpoint, q.scope.key, q.scope.service);
  ++m_roundTrips;
  m_async->claimFresh(q, [this, tag, done = std::move(done)](std::optional<ClaimResult> claimed, std::exception_ptr error) {
    if (claimed) {
      ++m_claims;
      m_recent.learnUnseen(false);  // a new key indeed
      m_recent.remember(tag);
    }
    done(std::move(claimed), std::move(error));
  });
  return true;
}

bool KeyStore::completeWithoutWaiting(const CompleteRequest& q, CompletedWithoutWaiting done) {
  if (m_async == nullptr) return false;
  m_async->complete(q, std::move(done));
  return true;
}

const char* decisionName(Decision d) {
  switch (d) {
    case Decision::Execute: return "execute";
    case Decision::ExecuteAfterExpiry: return "execute_after_expiry";
    case Decision::Takeover: return "takeover";
    case Decision::Replay: return "replay";
    case Decision::Conflict: return "conflict";
    case Decision::Mismatch: return "mismatch";
    case Decision::RejectedExpired: return "rejected_expired";
    case Decision::Duplicate: return "duplicate";
  }
  return "unknown";
}

ClaimResult KeyStore::claim(const ClaimRequest& q) {
  // A large body is read after the decision, on its own statement; a generation gone by then
  // (purged and run again in between) is decided afresh.
  for (int attempt = 1;; ++attempt) {
    std::size_t largeBody = 0;
    ClaimResult result = claimOnce(q, largeBody);
    if (largeBody == 0 || readLargeBody(q, result, largeBody)) return result;
    // Never an answer without its body: after three generations gone under the read, 503.
    if (attempt == 3) throw pg::Unavailable("the stored answer changed under three reads in a row");
  }
}

bool KeyStore::readLargeBody(const ClaimRequest& q, ClaimResult& replay, std::size_t bytes) {
  std::optional<ReplayBodies::ReadSlot> slot;
  if (m_bodies) {
    // The bytes first, then a read slot, then a connection: nothing waits holding a connection.
    replay.bodyHold = m_bodies->take(bytes, /*large=*/true);
    if (replay.bodyHold) slot.emplace(*m_bodies);
    if (!slot || !slot->held()) {
      replay.bodyHold.reset();
      replay.bodyRefused = true;
      replay.stored.reset();
      return true;
    }
  }
  ++m_roundTrips;
  auto body = m_pool.withRetry([&](pg::Connection& c) -> std::optional<std::string> {
    auto r = c.execPrepared("idem_replay_body", kReplayBodySql,
                            {q.scope.tenant, q.scope.endpoint, q.scope.key, q.scope.service, replay.generation},
                            /*binaryResults=*/true);
    if (r.rows() != 1) return std::nullopt;
    return std::string(r.text(0, r.column("resp_body", Type::Bytea)));
  });
  if (!body) return false;
  replay.stored->body = std::move(*body);
  return true;
}

ClaimResult KeyStore::claimOnce(const ClaimRequest& q, std::size_t& largeBody) {
  // Every statement here is safe to resend: if a lost answer hid a committed claim, the retry sees
  // our own processing row and answers 409; the lease then expires and a later retry takes
  // over. Never two executions.
  // The order of the two cheap statements is a guess this process makes: a key it decided
  // recently is probably a retry, so its stored response is read first (a replay in one round
  // trip); any other key is probably new, so it is claimed first (a claim in one round trip),
  // unless most keys new to this process lately were retries (RecentKeys::readUnseenFirst).
  // A wrong guess costs the other statement; both orders reach the same decision.
  const std::uint64_t tag = RecentKeys::tag(q.scope.tenant, q.scope.endpoint, q.scope.key, q.scope.service);
  const bool seenHere = m_recent.contains(tag);
  const bool likelyRetry = seenHere || m_recent.readUnseenFirst();
  bool hadLiveRow = false;  // what the read found; also the lesson on keys not seen here
  // Formatted only when a statement needs them: a replay does not.
  const auto policyVersion = [&] { return q.policyVersion > 0 ? pg::Param(q.policyVersion) : pg::Param::null(); };
  // A key this process takes for new is claimed in the next batch of fresh claims: one
  // multi-row INSERT and one commit for every claim that queued meanwhile (KeyBatches).
  std::optional<ClaimResult> fresh;
  if (!likelyRetry && !q.freshTried) {
    ++m_roundTrips;
    fresh = m_batches->claimFresh(q);
  }
  auto result = fresh ? std::move(*fresh) : m_pool.withRetry([&](pg::Connection& c) {
    // A key never seen (no live row, no archived generation): generation 1, leased to us.
    auto claimFresh = [&](ClaimResult& out) {
      ++m_roundTrips;
      auto claimed = claimFreshOne(c, q);
      if (claimed) out = std::move(*claimed);
      return claimed.has_value();
    };
    // The live row, if replayable; hadLiveRow tells whether there is one at all.
    auto readStored = [&](ClaimResult& out) {
      ++m_roundTrips;
      auto replay = c.execPrepared("idem_replay", kReplaySql,
                                   {q.scope.tenant, q.scope.endpoint, q.scope.key, pg::Param::bytes(q.fingerprint),
                                    q.scope.service},
                                   /*binaryResults=*/true);
      const ReplayColumns col(replay);
      hadLiveRow = replay.rows() != 0;
      if (replay.rows() != 1 || !replay.binBoolAt(0, col.replayable)) return false;
      if (replay.binBoolAt(0, col.syncDurable)) awaitDurable(c);
      out.decision = Decision::Replay;
      out.generation = replay.binInt32At(0, col.generation);
      out.expiresAt = replay.binTimestampMsAt(0, col.expiresAt);
      out.now = replay.binTimestampMsAt(0, col.now);
      StoredResponse s;
      s.status = replay.binInt32At(0, col.status);
      s.headers = headersFromJson(replay.binJsonbAt(0, col.headers));
      // Over kInlineReplayBody the read sent only the length: claim() reads the body itself.
      if (replay.isNull(0, col.body) && !replay.isNull(0, col.bodyBytes))
        largeBody = static_cast<std::size_t>(replay.binInt32At(0, col.bodyBytes));
      else
        s.body = std::string(replay.text(0, col.body));
      out.stored = std::move(s);
      return true;
    };
    ClaimResult out;
    hadLiveRow = false;  // a retry of the lambda starts over
    largeBody = 0;
    if (likelyRetry) {
      if (readStored(out)) return out;
      if (!hadLiveRow && claimFresh(out)) return out;
    } else {
      // The batch did not claim it (or a retry of this lambda after a lost connection).
      if (readStored(out)) return out;
    }
    // A new key of a tier with cross_key that the claim did not make: another key may hold its
    // request (migration 0027). Decided there, unless the key has a row or history of its own.
    if (q.crossKey && !hadLiveRow) {
      ++m_roundTrips;
      if (auto decided = claimSameRequest(c, q)) return std::move(*decided);
    }
    // The rare cases: a live row that is not replayable (409, 422, lease takeover, expired), or
    // a key with archived generations: idem.claim makes the whole decision.
    ++m_roundTrips;
    const std::vector<pg::Param> params{q.scope.tenant,
                                        q.scope.endpoint,
                                        q.scope.key,
                                        pg::Param::bytes(q.fingerprint),
                                        q.tier,
                                        policyVersion(),
                                        policy::toInterval(q.ttl),
                                        policy::toInterval(q.lease),
                                        q.rejectExpired ? "reject" : "execute",
                                        q.requestId,
                                        policy::toInterval(q.archiveRetention),
                                        q.scope.service};
    // idem.claim decides on fresh snapshots, so a clash with a concurrent sweep (IDA01) is gone
    // when it decides again.
    auto decide = [&] {
      for (int attempt = 1;; ++attempt) {
        try {
          return c.execPrepared("idem_claim", kClaimSql, params, /*binaryResults=*/true);
        } catch (const pg::QueryError& e) {
          if (e.sqlstate() != kArchivedMeanwhile || attempt == 3) throw;
        }
      }
    };
    auto r = decide();
    const ClaimColumns col(r);
    out.decision = parseDecision(r.text(0, col.decision));
    out.generation = r.binInt32At(0, col.generation);
    if (!r.isNull(0, col.expiresAt)) out.expiresAt = r.binTimestampMsAt(0, col.expiresAt);
    if (!r.isNull(0, col.leaseUntil)) out.leaseUntil = r.binTimestampMsAt(0, col.leaseUntil);
    if (!r.isNull(0, col.leaseToken)) out.leaseToken = r.binUuidAt(0, col.leaseToken);
    out.retryAfterMs = r.isNull(0, col.retryAfterMs) ? 0 : r.binInt64At(0, col.retryAfterMs);
    out.now = r.binTimestampMsAt(0, col.now);
    if (out.decision == Decision::Replay) {  // the row completed between the statements
      awaitDurable(c);
      StoredResponse s;
      s.status = r.binInt32At(0, col.status);
      s.headers = headersFromJson(r.binJsonbAt(0, col.headers));
      s.body = std::string(r.text(0, col.body));
      out.stored = std::move(s);
    }
    return out;
  });
  ++m_claims;
  if (!seenHere) m_recent.learnUnseen(hadLiveRow);
  m_recent.remember(tag);
  return result;
}

CompleteResult KeyStore::complete(const CompleteRequest& q, const std::vector<SideStatement>& sameTransaction) {
  // Without side statements the completion goes in the next batch of completions (KeyBatches):
  // one multi-row UPDATE and one commit for all that queued meanwhile.
  if (sameTransaction.empty())
    if (auto stored = m_batches->complete(q)) return *stored;
  auto lease = m_pool.acquire();
  auto& conn = lease.conn();
  CompleteResult out;
  // The late execution's work: rolled back with its completion, or done and unrecorded — then
  // the resource it created is the one support has to find (explain names it).
  const auto recordLeaseLost = [&](std::string_view fate) {
    std::string detail(fate);
    if (fate == kLeaseLostNotStored && q.resourceRef && !q.resourceRef->empty())
      detail += std::string(kDetailResource) + *q.resourceRef;
    conn.exec(kLeaseLostSql, {q.scope.tenant, q.scope.endpoint, q.scope.key, q.response.status, q.latencyMs,
                              q.requestId, detail, q.scope.service});
  };
  // Not processing under our token: stored by our own earlier attempt (its COMMIT succeeded but
  // the answer was lost, so complete() retried), or taken over by a retry.
  const auto storedByUs = [&]() -> std::optional<CompleteResult> {
    auto ours = conn.exec(kCompletedBySql, {q.scope.tenant, q.scope.endpoint, q.scope.key, q.leaseToken, q.scope.service});
    if (ours.rows() == 0) return std::nullopt;
    awaitDurable(conn);  // the COMMIT that stored it was never acknowledged
    return completedRow(ours, 0);
  };
  try {
    std::optional<pg::Result> result;
    if (sameTransaction.empty()) {
      // The batch found the key not processing under our token.
      if (auto ours = storedByUs()) return *ours;
      recordLeaseLost(kLeaseLostNotStored);
      return out;
    }
    {
      // One pipeline: BEGIN, the completion, the side statements, COMMIT — one round trip,
      // and the side effects (a ledger row) exist exactly when the key says done.
      std::vector<std::pair<std::string, std::vector<pg::Param>>> batch;
      batch.emplace_back("BEGIN", std::vector<pg::Param>{});
      batch.emplace_back(kCompleteOrAbortSql, completeParams(q));
      for (const auto& s : sameTransaction) batch.emplace_back(s.sql, s.params);
      batch.emplace_back("COMMIT", std::vector<pg::Param>{});
      auto tx = pg::Transaction::begunByPipeline(conn);
      try {
        auto results = conn.pipeline(batch);
        tx.committedByPipeline();
        result.emplace(std::move(results.at(1)));
      } catch (const pg::QueryError& e) {
        if (e.sqlstate() != kLeaseLost) throw;
        tx.rollback();
        // Our own earlier attempt committed, its side statements with it: nothing to redo.
        if (auto ours = storedByUs()) return *ours;
        recordLeaseLost(kLeaseLostRolledBack);
        return out;
      }
    }
    if (result->rows() == 0) return out;
    out = completedRow(*result, 0);
  } catch (const pg::Unavailable&) {
    lease.discard();
    m_pool.dropIdle();
    throw;
  } catch (const pg::QueryError&) {
    // The transaction of a failed pipeline was rolled back above; a connection that is still
    // in one (its ROLLBACK failed) is not handed out again.
    if (conn.transactionState() != pg::TxState::Idle) lease.discard();
    throw;
  }
  return out;
}

std::vector<std::string> KeyStore::renewLeases(const std::vector<LeaseHold>& holds) {
  std::vector<std::string> tenants, endpoints, keys, tokens, leases, services;
  for (const auto& h : holds) {
    tenants.push_back(h.scope.tenant);
    endpoints.push_back(h.scope.endpoint);
    keys.push_back(h.scope.key);
    tokens.push_back(h.token);
    leases.push_back(policy::toInterval(h.lease));
    services.push_back(h.scope.service);
  }
  auto r = m_pool.withRetry([&](pg::Connection& c) {
    return c.execPrepared("idem_renew_leases", kRenewLeasesSql,
                          {pg::arrayLiteral(tenants), pg::arrayLiteral(endpoints), pg::arrayLiteral(keys),
                           pg::arrayLiteral(tokens), pg::arrayLiteral(leases), pg::arrayLiteral(services)});
  });
  std::vector<std::string> held;
  held.reserve(static_cast<std::size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) held.push_back(r.str(i, "lease_token"));
  return held;
}

bool KeyStore::release(const Scope& scope, const std::string& leaseToken, int status, const std::string& requestId,
                       const std::string& reason) {
  auto r = m_pool.withRetry([&](pg::Connection& c) {
    return c.execPrepared("idem_release", kReleaseSql,
                          {scope.tenant, scope.endpoint, scope.key, leaseToken, status, requestId, reason, scope.service});
  });
  return r.boolean(0, "released");
}

}  // namespace idem::store
