#include "core/store/crosskeyclaim.h"

#include <algorithm>

#include "core/policy/duration.h"
#include "core/store/pgarray.h"

namespace idem::store {
namespace {

using pg::Type;

// The function decides; a statement only carries it. The batch keeps the order it was given
// (sorted by key, like every batch: two processes lock keys in one order).
constexpr const char* kCheckedSql =
    "SELECT r.* FROM idem.claim_fresh_checked($1::text, $2::text, $3::text, $4::text, $5::bytea, $6::text, "
    "$7::integer, $8::interval, $9::interval, $10::text, $11::interval, $12::boolean, $13::boolean) r";

constexpr const char* kCheckedBatchSql =
    "SELECT c.tenant, c.endpoint, c.idem_key, c.service, r.* "
    "FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::text[], $7::integer[], "
    "$8::interval[], $9::interval[], $10::text[], $11::interval[], $12::boolean[], $13::boolean[]) "
    "WITH ORDINALITY AS c(tenant, endpoint, idem_key, service, fingerprint, tier, policy_version, ttl, lease, "
    "request_id, win, blocks, confirmed, ord) "
    "CROSS JOIN LATERAL idem.claim_fresh_checked(c.tenant, c.endpoint, c.idem_key, c.service, c.fingerprint, c.tier, "
    "c.policy_version, c.ttl, c.lease, c.request_id, c.win, c.blocks, c.confirmed) r "
    "ORDER BY c.ord";

struct CheckedColumns {
  FreshClaimColumns fresh;
  int claimed, matchedKey, matchedAt, matchedState, matchedStatus, matchedResource;
  explicit CheckedColumns(const pg::Result& r)
      : fresh(r),
        claimed(r.column("claimed", Type::Bool)),
        matchedKey(r.column("matched_key", Type::Text)),
        matchedAt(r.column("matched_at", Type::Timestamptz)),
        matchedState(r.column("matched_state", Type::Text)),
        matchedStatus(r.column("matched_status", Type::Int4)),
        matchedResource(r.column("matched_resource", Type::Text)) {}
};

std::optional<ClaimResult> checkedRow(const pg::Result& r, const CheckedColumns& col, int row) {
  const bool claimed = r.binBoolAt(row, col.claimed);
  const bool matched = !r.isNull(row, col.matchedKey);
  if (!claimed && !matched) return std::nullopt;  // a live row or history: the key decides alone
  ClaimResult out;
  if (claimed) out = freshClaim(r, col.fresh, row);
  else out.now = r.binTimestampMsAt(row, col.fresh.now);
  if (matched) {
    CrossKeyMatch m;
    m.key = std::string(r.text(row, col.matchedKey));
    m.at = r.binTimestampMsAt(row, col.matchedAt);
    if (!r.isNull(row, col.matchedState)) m.state = std::string(r.text(row, col.matchedState));
    if (!r.isNull(row, col.matchedStatus)) m.status = r.binInt32At(row, col.matchedStatus);
    if (!r.isNull(row, col.matchedResource)) m.resource = std::string(r.text(row, col.matchedResource));
    out.match = std::move(m);
  }
  if (!claimed) out.decision = Decision::Duplicate;
  return out;
}

pg::Param policyVersionParam(const ClaimRequest& q) {
  return q.policyVersion > 0 ? pg::Param(q.policyVersion) : pg::Param::null();
}

}  // namespace

std::optional<ClaimResult> claimFreshCheckedOne(pg::Connection& c, const ClaimRequest& q) {
  const CrossKeyCheck& x = *q.crossKey;
  auto r = c.execPrepared("idem_claim_fresh_checked", kCheckedSql,
                          {q.scope.tenant, q.scope.endpoint, q.scope.key, q.scope.service,
                           pg::Param::bytes(q.fingerprint), q.tier, policyVersionParam(q), policy::toInterval(q.ttl),
                           policy::toInterval(q.lease), q.requestId, policy::toInterval(x.window),
                           x.blocks ? "true" : "false", x.confirmed ? "true" : "false"},
                          /*binaryResults=*/true);
  if (r.rows() != 1) return std::nullopt;
  return checkedRow(r, CheckedColumns(r), 0);
}

void claimFreshCheckedBatch(pg::Connection& c, std::span<KeyBatches::ClaimJob*> jobs) {
  pg::ArrayParam tenants(Type::Text), endpoints(Type::Text), keys(Type::Text), services(Type::Text),
      fingerprints(Type::Bytea), tiers(Type::Text), versions(Type::Int4), ttls(Type::Interval), leases(Type::Interval),
      requestIds(Type::Text), windows(Type::Interval), blocks(Type::Bool), confirmed(Type::Bool);
  for (const auto* j : jobs) {
    const ClaimRequest& q = *j->request;
    tenants.addText(q.scope.tenant);
    endpoints.addText(q.scope.endpoint);
    keys.addText(q.scope.key);
    services.addText(q.scope.service);
    fingerprints.addBytes(q.fingerprint);
    tiers.addText(q.tier);
    if (q.policyVersion > 0) versions.addInt4(q.policyVersion);
    else versions.addNull();
    ttls.addInterval(q.ttl);
    leases.addInterval(q.lease);
    requestIds.addText(q.requestId);
    windows.addInterval(q.crossKey->window);
    blocks.addBool(q.crossKey->blocks);
    confirmed.addBool(q.crossKey->confirmed);
  }
  auto r = c.execPrepared("idem_claim_fresh_checked_batch", kCheckedBatchSql,
                          {tenants.take(), endpoints.take(), keys.take(), services.take(), fingerprints.take(),
                           tiers.take(), versions.take(), ttls.take(), leases.take(), requestIds.take(),
                           windows.take(), blocks.take(), confirmed.take()},
                          /*binaryResults=*/true);
  const CheckedColumns col(r);
  // One row per job, in the jobs' order (ORDER BY the ordinality).
  for (int row = 0; row < r.rows() && row < static_cast<int>(jobs.size()); ++row)
    jobs[static_cast<std::size_t>(row)]->claimed = checkedRow(r, col, row);
}

}  // namespace idem::store
