#pragma once
// Fresh claims on tiers with `cross_key` (docs/policy.md, "Duplicates across keys"). The plain
// claim marks the new row as its request's latest execution (migration 0027); a unique index
// lets one row per request hold the mark, so two hedged requests sent at once cannot both miss
// each other. When the plain claim returns no row for such a key, this decides: the key's own
// history, or another key's execution of the same request.
#include <optional>

#include "core/store/keystore.h"
#include "core/store/pg.h"

namespace idem::store {

/// The decision for a key of a tier with cross_key that the plain claim did not make (q.crossKey
/// set): Execute (with the match that ran anyway: observe, confirmed, or none when the window had
/// passed), Duplicate (a match the tier answers: hold or reject), or nullopt: the key has a live
/// row or history, and decides as any key does.
[[nodiscard]] std::optional<ClaimResult> claimSameRequest(pg::Connection& c, const ClaimRequest& q);

}  // namespace idem::store
