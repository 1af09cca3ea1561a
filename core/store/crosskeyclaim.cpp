#include "core/store/crosskeyclaim.h"

#include "core/policy/duration.h"
#include "core/store/keysql.h"

namespace idem::store {
namespace {

using pg::Type;

constexpr const char* kClaimSameRequestSql =
    "SELECT s.decision, s.generation, s.expires_at, s.lease_token, s.lease_until, s.matched_key, s.matched_at, "
    "s.matched_state, s.matched_status, s.matched_resource, s.db_now "
    "FROM idem.claim_same_request($1::text, $2::text, $3::text, $4::bytea, $5::text, $6::integer, $7::interval, "
    "$8::interval, $9::text, $10::text, $11::interval, $12::text) s";

/// How this claim treats a match: the mode, or "confirmed" for a held match the client
/// confirmed (it runs, and becomes the latest).
std::string_view claimedAs(const CrossKeyCheck& x) {
  if (!x.blocks) return "observe";
  if (x.confirmed) return "confirmed";
  return x.rejects ? "reject" : "hold";
}

}  // namespace

std::optional<ClaimResult> claimSameRequest(pg::Connection& c, const ClaimRequest& q) {
  std::optional<pg::Result> decided;
  try {
    decided.emplace(c.execPrepared(
        "idem_claim_same_request", kClaimSameRequestSql,
        {q.scope.tenant, q.scope.endpoint, q.scope.key, pg::Param::bytes(q.fingerprint), q.tier,
         q.policyVersion > 0 ? pg::Param(q.policyVersion) : pg::Param::null(), policy::toInterval(q.ttl),
         policy::toInterval(q.lease), q.requestId, q.scope.service, policy::toInterval(q.crossKey->window),
         claimedAs(*q.crossKey)},
        /*binaryResults=*/true));
  } catch (const pg::QueryError& e) {
    // A sweeper archived this key while we claimed it (0014's trigger): the key has history.
    if (e.sqlstate() != sql::kArchivedMeanwhile) throw;
    return std::nullopt;
  }
  const pg::Result& r = *decided;
  const std::string_view decision = r.text(0, r.column("decision", Type::Text));
  if (decision == "alone") return std::nullopt;
  ClaimResult out;
  out.now = r.binTimestampMsAt(0, r.column("db_now", Type::Timestamptz));
  if (decision == "held") {
    out.decision = Decision::Duplicate;
  } else {
    out.decision = Decision::Execute;
    out.generation = r.binInt32At(0, r.column("generation", Type::Int4));
    out.expiresAt = r.binTimestampMsAt(0, r.column("expires_at", Type::Timestamptz));
    out.leaseToken = r.binUuidAt(0, r.column("lease_token", Type::Uuid));
    out.leaseUntil = r.binTimestampMsAt(0, r.column("lease_until", Type::Timestamptz));
  }
  const int matchedKey = r.column("matched_key", Type::Text);
  if (!r.isNull(0, matchedKey)) {
    const int state = r.column("matched_state", Type::Text);
    const int status = r.column("matched_status", Type::Int4);
    const int resource = r.column("matched_resource", Type::Text);
    CrossKeyMatch m;
    m.key = std::string(r.text(0, matchedKey));
    m.at = r.binTimestampMsAt(0, r.column("matched_at", Type::Timestamptz));
    if (!r.isNull(0, state)) m.state = std::string(r.text(0, state));
    if (!r.isNull(0, status)) m.status = r.binInt32At(0, status);
    if (!r.isNull(0, resource)) m.resource = std::string(r.text(0, resource));
    out.match = std::move(m);
  }
  return out;
}

}  // namespace idem::store
