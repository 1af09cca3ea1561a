#include "core/store/keystore.h"

#include "core/policy/duration.h"
#include "core/store/headercodec.h"

namespace idem::store {
namespace {

// The common repeat, an unexpired done key with the same fingerprint, is answered by a plain
// primary-key read: a replay costs what a SELECT costs. The same read tells a fresh key (no
// row) from the rest; a fresh key is claimed by one INSERT, and only the rare cases (a live
// row that is not replayable, an archived key) run idem.claim, the full decision. Measured:
// folding the read and the claim into one statement (UNION ALL … LIMIT 1) made replays ~35%
// slower; the plain statements instead of plpgsql functions made new keys ~15% faster.
// Binary results: the stored body comes as is. Read by column position: keep the order.
constexpr const char* kReplaySql =
    "SELECT k.generation, k.expires_at, k.resp_status, k.resp_headers, k.resp_body, now() AS db_now, "
    "(k.state = 'done' AND k.expires_at > now() AND k.fingerprint = $4) AS replayable "
    "FROM idem.keys k WHERE k.tenant = $1 AND k.endpoint = $2 AND k.idem_key = $3";

// A key never seen (no live row, no archived generation): generation 1, leased to us. No row
// back: someone inserted it meanwhile, or it has history; idem.claim decides then.
constexpr const char* kFreshClaimSql =
    "INSERT INTO idem.keys AS k (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint, "
    "state, lease_token, lease_until, request_id, expires_at) "
    "SELECT $1::text, $2::text, $3::text, 1, $5::text, $6::integer, $4::bytea, 'processing', gen_random_uuid(), "
    "now() + $8::interval, $9::text, now() + $7::interval "
    "WHERE NOT EXISTS (SELECT 1 FROM idem.key_archive a WHERE a.tenant = $1 AND a.endpoint = $2 AND a.idem_key = $3) "
    "ON CONFLICT DO NOTHING "
    "RETURNING k.generation, k.expires_at, k.lease_token, k.lease_until, now() AS db_now";

constexpr const char* kClaimSql =
    "SELECT c.decision, c.generation, c.expires_at, c.lease_token, c.lease_until, c.resp_status, c.resp_headers, "
    "c.resp_body, c.retry_after_ms, now() AS db_now "
    "FROM idem.claim($1, $2, $3, $4, $5, $6, $7::interval, $8::interval, $9, $10, $11::interval) c";

// The completion and its trace row in one statement (so one transaction), the same work as
// idem.complete without the function call. No row back: the lease was taken over.
constexpr const char* kCompleteSql =
    "WITH done AS ("
    " UPDATE idem.keys k SET state = 'done', resp_status = $5::integer, resp_headers = $6::jsonb, "
    " resp_body = $7::bytea, resource_ref = $8::text, completed_at = now(), lease_token = NULL, lease_until = NULL"
    " WHERE k.tenant = $1::text AND k.endpoint = $2::text AND k.idem_key = $3::text AND k.state = 'processing'"
    " AND k.lease_token = $4::uuid"
    " RETURNING k.generation, k.expires_at, k.tier, k.fingerprint), "
    "traced AS ("
    " INSERT INTO idem.events (tenant, endpoint, idem_key, generation, tier, outcome, fingerprint, status, "
    " latency_ms, request_id, detail)"
    " SELECT $1, $2, $3, d.generation, d.tier, $9::text, d.fingerprint, $5, $10::double precision, $11::text, $8"
    " FROM done d) "
    "SELECT d.generation, (extract(epoch FROM d.expires_at) * 1000)::bigint AS expires_ms FROM done d";

constexpr const char* kCompleteStrictSql =
    "SELECT c.generation, (extract(epoch FROM c.expires_at) * 1000)::bigint AS expires_ms "
    "FROM idem.complete_strict($1, $2, $3, $4::uuid, $5, $6::jsonb, $7, $8, $9, $10, $11) c";

constexpr const char* kLeaseLostSql =
    "INSERT INTO idem.events (tenant, endpoint, idem_key, outcome, status, latency_ms, request_id, detail) "
    "VALUES ($1, $2, $3, 'lease_lost', $4, $5, $6, $7)";

constexpr const char* kReleaseSql = "SELECT idem.release($1, $2, $3, $4::uuid, $5, $6, $7) AS released";

Decision parseDecision(std::string_view s) {
  if (s == "execute") return Decision::Execute;
  if (s == "execute_after_expiry") return Decision::ExecuteAfterExpiry;
  if (s == "takeover") return Decision::Takeover;
  if (s == "replay") return Decision::Replay;
  if (s == "conflict") return Decision::Conflict;
  if (s == "mismatch") return Decision::Mismatch;
  return Decision::RejectedExpired;
}

std::vector<pg::Param> completeParams(const CompleteRequest& r) {
  return {r.scope.tenant,
          r.scope.endpoint,
          r.scope.key,
          r.leaseToken,
          r.response.status,
          headersToJson(r.response.headers),
          pg::Param::bytes(r.response.body),
          r.resourceRef ? pg::Param(*r.resourceRef) : pg::Param::null(),
          r.outcome,
          r.latencyMs,
          r.requestId};
}

}  // namespace

const char* decisionName(Decision d) {
  switch (d) {
    case Decision::Execute: return "execute";
    case Decision::ExecuteAfterExpiry: return "execute_after_expiry";
    case Decision::Takeover: return "takeover";
    case Decision::Replay: return "replay";
    case Decision::Conflict: return "conflict";
    case Decision::Mismatch: return "mismatch";
    case Decision::RejectedExpired: return "rejected_expired";
  }
  return "unknown";
}

ClaimResult KeyStore::claim(const ClaimRequest& q) {
  // Both statements are safe to resend: if a lost answer hid a committed claim, the retry sees
  // our own processing row and answers 409; the lease then expires and a later retry takes
  // over. Never two executions.
  return m_pool.withRetry([&](pg::Connection& c) {
    ClaimResult out;
    auto replay = c.execPrepared("idem_replay", kReplaySql,
                                 {q.scope.tenant, q.scope.endpoint, q.scope.key, pg::Param::bytes(q.fingerprint)},
                                 /*binaryResults=*/true);
    // Positions as in kReplaySql's select list; column 6 is the boolean "replayable".
    if (replay.rows() == 1 && replay.text(0, 6) == std::string_view("\x01", 1)) {
      out.decision = Decision::Replay;
      out.generation = replay.binInt32At(0, 0);
      out.expiresAt = replay.binTimestampMsAt(0, 1);
      out.now = replay.binTimestampMsAt(0, 5);
      StoredResponse s;
      s.status = replay.binInt32At(0, 2);
      s.headers = headersFromJson(replay.binJsonbAt(0, 3));
      s.body = std::string(replay.text(0, 4));
      out.stored = std::move(s);
      return out;
    }
    const std::string ttl = policy::toInterval(q.ttl);
    const std::string lease = policy::toInterval(q.lease);
    const pg::Param policyVersion = q.policyVersion > 0 ? pg::Param(q.policyVersion) : pg::Param::null();
    if (replay.rows() == 0) {
      auto fresh = c.execPrepared("idem_claim_fresh", kFreshClaimSql,
                                  {q.scope.tenant, q.scope.endpoint, q.scope.key, pg::Param::bytes(q.fingerprint),
                                   q.tier, policyVersion, ttl, lease, q.requestId},
                                  /*binaryResults=*/true);
      if (fresh.rows() == 1) {
        out.decision = Decision::Execute;
        out.generation = fresh.binInt32At(0, 0);
        out.expiresAt = fresh.binTimestampMsAt(0, 1);
        out.leaseToken = fresh.binUuid(0, "lease_token");
        out.leaseUntil = fresh.binTimestampMsAt(0, 3);
        out.now = fresh.binTimestampMsAt(0, 4);
        return out;
      }
    }
    const std::vector<pg::Param> params{q.scope.tenant,
                                        q.scope.endpoint,
                                        q.scope.key,
                                        pg::Param::bytes(q.fingerprint),
                                        q.tier,
                                        policyVersion,
                                        ttl,
                                        lease,
                                        q.rejectExpired ? "reject" : "execute",
                                        q.requestId,
                                        policy::toInterval(q.archiveRetention)};
    auto r = c.execPrepared("idem_claim", kClaimSql, params, /*binaryResults=*/true);
    out.decision = parseDecision(r.text(0, r.column("decision")));
    out.generation = r.binInt32(0, "generation");
    if (!r.isNull(0, r.column("expires_at"))) out.expiresAt = r.binTimestampMs(0, "expires_at");
    if (!r.isNull(0, r.column("lease_until"))) out.leaseUntil = r.binTimestampMs(0, "lease_until");
    if (!r.isNull(0, r.column("lease_token"))) out.leaseToken = r.binUuid(0, "lease_token");
    out.retryAfterMs = r.isNull(0, r.column("retry_after_ms")) ? 0 : r.binInt64(0, "retry_after_ms");
    out.now = r.binTimestampMs(0, "db_now");
    if (out.decision == Decision::Replay) {  // the row completed between the two statements
      StoredResponse s;
      s.status = r.binInt32(0, "resp_status");
      s.headers = headersFromJson(r.binJsonb(0, "resp_headers"));
      s.body = std::string(r.text(0, r.column("resp_body")));
      out.stored = std::move(s);
    }
    return out;
  });
}

CompleteResult KeyStore::complete(const CompleteRequest& q, const std::vector<SideStatement>& sameTransaction) {
  auto lease = m_pool.acquire();
  auto& conn = lease.conn();
  CompleteResult out;
  try {
    std::optional<pg::Result> result;
    if (sameTransaction.empty()) {
      result.emplace(conn.execPrepared("idem_complete", kCompleteSql, completeParams(q)));
      if (result->rows() == 0) {
        conn.exec(kLeaseLostSql, {q.scope.tenant, q.scope.endpoint, q.scope.key, q.response.status, q.latencyMs,
                                  q.requestId, "completed after the lease was taken over; response not stored"});
        return out;
      }
    } else {
      // One pipeline: BEGIN, the completion, the side statements, COMMIT — one round trip,
      // and the side effects (a ledger row) exist exactly when the key says done.
      std::vector<std::pair<std::string, std::vector<pg::Param>>> batch;
      batch.emplace_back("BEGIN", std::vector<pg::Param>{});
      batch.emplace_back(kCompleteStrictSql, completeParams(q));
      for (const auto& s : sameTransaction) batch.emplace_back(s.sql, s.params);
      batch.emplace_back("COMMIT", std::vector<pg::Param>{});
      try {
        auto results = conn.pipeline(batch);
        result.emplace(std::move(results.at(1)));
      } catch (const pg::QueryError& e) {
        if (e.sqlstate() != "IDL01") throw;
        conn.exec("ROLLBACK");
        conn.exec(kLeaseLostSql, {q.scope.tenant, q.scope.endpoint, q.scope.key, q.response.status, q.latencyMs,
                                  q.requestId, "completed after the lease was taken over; rolled back"});
        return out;
      }
    }
    if (result->rows() == 0) return out;
    out.stored = true;
    out.generation = static_cast<int>(result->integer(0, "generation"));
    out.expiresAt = result->integer(0, "expires_ms");
  } catch (const pg::Unavailable&) {
    lease.discard();
    m_pool.dropIdle();
    throw;
  } catch (const pg::QueryError&) {
    // A failed pipeline leaves the transaction aborted: roll back before reuse.
    try {
      conn.exec("ROLLBACK");
    } catch (...) {
      lease.discard();
    }
    throw;
  }
  return out;
}

bool KeyStore::release(const Scope& scope, const std::string& leaseToken, int status, const std::string& requestId,
                       const std::string& reason) {
  auto r = m_pool.withRetry([&](pg::Connection& c) {
    return c.execPrepared("idem_release", kReleaseSql,
                          {scope.tenant, scope.endpoint, scope.key, leaseToken, status, requestId, reason});
  });
  return r.boolean(0, "released");
}

}  // namespace idem::store
