#pragma once
// Fresh claims on tiers with `cross_key` (docs/policy.md, "Duplicates across keys"): the claim
// and the look for another key's execution of the same request are one function call in one
// transaction (idem.claim_fresh_checked, migration 0026), so two hedged requests sent at once
// cannot both miss each other. One key alone, or a batch of them in one statement.
#include <optional>
#include <span>

#include "core/store/keybatches.h"
#include "core/store/keystore.h"
#include "core/store/pg.h"

namespace idem::store {

/// The checked claim of one key (q.crossKey set): Execute (possibly with a match that ran
/// anyway), Duplicate (a match the tier answers), or nullopt: the key has a live row or history.
[[nodiscard]] std::optional<ClaimResult> claimFreshCheckedOne(pg::Connection& c, const ClaimRequest& q);

/// The same for a batch (each job's request has crossKey set; each key once), one statement:
/// every job's `claimed` is set or left empty as claimFreshCheckedOne would.
void claimFreshCheckedBatch(pg::Connection& c, std::span<KeyBatches::ClaimJob*> jobs);

}  // namespace idem::store
