#include "core/store/crosskeyclaim.h"

#include "core/policy/duration.h"

namespace idem::store {
namespace {

using pg::Type;

// One statement for one key or a batch (docs/policy.md, "Duplicates across keys"):
//  - `fresh`: the keys with no live row and no history (the others decide alone, as always);
//  - `f`: each fresh key's request upserts its fingerprint's row. A claim of the same request
//    in flight elsewhere holds that row: this one waits for its commit and then sees it. The
//    row keeps the earlier key when the claim matches and its mode holds or rejects (the
//    window is forget_at - seen_at of the new row); prev_key/prev_at report what it found;
//  - `k`: the key is claimed only where the row now names it. A held request claims nothing.
// Two keys of one batch with the same request fail the statement (a row affected twice): the
// batch is split and each decides in its own statement (keybatches.cpp).
constexpr const char* kCheckedClaimSql =
    "WITH c AS ("
    " SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::text[], $6::integer[], "
    " $7::interval[], $8::interval[], $9::text[], $10::text[], $11::interval[], $12::text[]) WITH ORDINALITY "
    " AS c(tenant, endpoint, idem_key, fingerprint, tier, policy_version, ttl, lease, request_id, service, win, "
    " claimed_as, ord)), "
    "fresh AS ("
    " SELECT c.* FROM c WHERE NOT EXISTS (SELECT 1 FROM idem.keys k WHERE k.tenant = c.tenant "
    " AND k.endpoint = c.endpoint AND k.idem_key = c.idem_key AND k.service = c.service) "
    " AND NOT EXISTS (SELECT 1 FROM idem.key_archive a WHERE a.tenant = c.tenant AND a.endpoint = c.endpoint "
    " AND a.idem_key = c.idem_key AND a.service = c.service)), "
    "f AS ("
    " INSERT INTO idem.recent_fingerprints AS f (service, tenant, endpoint, fingerprint, idem_key, seen_at, forget_at, "
    " claimed_as) "
    " SELECT fresh.service, fresh.tenant, fresh.endpoint, fresh.fingerprint, fresh.idem_key, now(), "
    " now() + fresh.win, fresh.claimed_as FROM fresh "
    " ON CONFLICT (service, tenant, endpoint, fingerprint) DO UPDATE SET "
    " prev_key = f.idem_key, prev_at = f.seen_at, "
#define IDEM_HELD                                                                                  \
  "(excluded.claimed_as IN ('hold', 'reject') AND f.idem_key <> excluded.idem_key "                \
  "AND f.seen_at > excluded.seen_at - (excluded.forget_at - excluded.seen_at))"
    " idem_key = CASE WHEN " IDEM_HELD " THEN f.idem_key ELSE excluded.idem_key END, "
    " seen_at = CASE WHEN " IDEM_HELD " THEN f.seen_at ELSE excluded.seen_at END, "
    " forget_at = CASE WHEN " IDEM_HELD " THEN f.forget_at ELSE excluded.forget_at END, "
    " claimed_as = CASE WHEN " IDEM_HELD " THEN f.claimed_as ELSE excluded.claimed_as END "
#undef IDEM_HELD
    " RETURNING f.service, f.tenant, f.endpoint, f.fingerprint, f.idem_key AS latest_key, f.prev_key, f.prev_at), "
    "fx AS ("
    " SELECT fresh.ord, f.latest_key, f.prev_at, m.idem_key AS matched_key, m.state, m.resp_status, m.resource_ref "
    " FROM fresh JOIN f ON f.service = fresh.service AND f.tenant = fresh.tenant AND f.endpoint = fresh.endpoint "
    " AND f.fingerprint = fresh.fingerprint "
    // The earlier key's row, by its whole primary key (a join on a column of an outer join's
    // nullable side would scan the route's keys). Swept already: still a match, without details.
    " LEFT JOIN LATERAL (SELECT f.prev_key AS idem_key, mk.state, mk.resp_status, mk.resource_ref "
    " FROM (SELECT 1) one LEFT JOIN idem.keys mk ON mk.tenant = fresh.tenant AND mk.endpoint = fresh.endpoint "
    " AND mk.idem_key = f.prev_key AND mk.service = fresh.service) m "
    " ON f.prev_key <> fresh.idem_key AND f.prev_at > now() - fresh.win), "
    "k AS ("
    " INSERT INTO idem.keys AS k (tenant, endpoint, idem_key, service, generation, tier, policy_version, fingerprint, "
    " state, lease_token, lease_until, request_id, expires_at) "
    " SELECT fresh.tenant, fresh.endpoint, fresh.idem_key, fresh.service, 1, fresh.tier, fresh.policy_version, "
    " fresh.fingerprint, 'processing', gen_random_uuid(), now() + fresh.lease, fresh.request_id, "
    " greatest(now() + fresh.ttl, now() + fresh.lease + interval '1 second') "
    " FROM fresh JOIN fx ON fx.ord = fresh.ord WHERE fx.latest_key = fresh.idem_key "
    " ON CONFLICT DO NOTHING "
    " RETURNING k.tenant, k.endpoint, k.idem_key, k.service, k.generation, k.expires_at, k.lease_token, "
    " k.lease_until) "
    "SELECT c.ord, (k.idem_key IS NOT NULL) AS claimed, (fx.latest_key <> c.idem_key) AS held, "
    " k.generation, k.expires_at, k.lease_token, k.lease_until, "
    " fx.matched_key, fx.prev_at AS matched_at, fx.state AS matched_state, fx.resp_status AS matched_status, "
    " fx.resource_ref AS matched_resource, now() AS db_now "
    "FROM c "
    "LEFT JOIN k ON k.tenant = c.tenant AND k.endpoint = c.endpoint AND k.idem_key = c.idem_key "
    " AND k.service = c.service "
    "LEFT JOIN fx ON fx.ord = c.ord "
    "ORDER BY c.ord";

struct CheckedColumns {
  FreshClaimColumns fresh;
  int claimed, held, matchedKey, matchedAt, matchedState, matchedStatus, matchedResource;
  explicit CheckedColumns(const pg::Result& r)
      : fresh(r),
        claimed(r.column("claimed", Type::Bool)),
        held(r.column("held", Type::Bool)),
        matchedKey(r.column("matched_key", Type::Text)),
        matchedAt(r.column("matched_at", Type::Timestamptz)),
        matchedState(r.column("matched_state", Type::Text)),
        matchedStatus(r.column("matched_status", Type::Int4)),
        matchedResource(r.column("matched_resource", Type::Text)) {}
};

std::optional<ClaimResult> checkedRow(const pg::Result& r, const CheckedColumns& col, int row) {
  const bool claimed = r.binBoolAt(row, col.claimed);
  const bool held = !r.isNull(row, col.held) && r.binBoolAt(row, col.held);
  const bool matched = !r.isNull(row, col.matchedKey);
  // Neither claimed nor held: a live row or history, or a concurrent claim of the same key won.
  if (!claimed && !(held && matched)) return std::nullopt;
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

/// How the fingerprint's row records this claim: the mode, or "confirmed" for a held match the
/// client confirmed (it runs, and becomes the latest).
std::string_view claimedAs(const CrossKeyCheck& x) {
  if (!x.blocks) return "observe";
  if (x.confirmed) return "confirmed";
  return x.rejects ? "reject" : "hold";
}

}  // namespace

void claimFreshCheckedBatch(pg::Connection& c, std::span<KeyBatches::ClaimJob*> jobs) {
  // The plain claim's ten arrays ($1..$10), then the window and the mode ($11, $12).
  ClaimArrays arrays;
  pg::ArrayParam windows(Type::Interval), modes(Type::Text);
  for (const auto* j : jobs) {
    arrays.add(*j->request);
    windows.addInterval(j->request->crossKey->window);
    modes.addText(claimedAs(*j->request->crossKey));
  }
  auto params = arrays.take();
  params.push_back(windows.take());
  params.push_back(modes.take());
  auto r = c.execPrepared("idem_claim_fresh_checked", kCheckedClaimSql, params, /*binaryResults=*/true);
  const CheckedColumns col(r);
  // One row per job, in the jobs' order (ORDER BY the ordinality).
  for (int row = 0; row < r.rows() && row < static_cast<int>(jobs.size()); ++row)
    jobs[static_cast<std::size_t>(row)]->claimed = checkedRow(r, col, row);
}

std::optional<ClaimResult> claimFreshCheckedOne(pg::Connection& c, const ClaimRequest& q) {
  KeyBatches::ClaimJob job{&q, std::nullopt, nullptr};
  KeyBatches::ClaimJob* one[] = {&job};
  claimFreshCheckedBatch(c, one);
  return std::move(job.claimed);
}

}  // namespace idem::store
