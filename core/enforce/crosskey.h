#pragma once
// Duplicates across keys at the enforcer (docs/policy.md, "Duplicates across keys"): what a
// tier's `cross_key` asks of a fresh claim, and what a match is answered and traced as. The look
// itself is the store's (core/store/crosskeyclaim.h): one statement with the claim.
#include <optional>
#include <string>
#include <string_view>

#include "core/enforce/problem.h"
#include "core/policy/policy.h"
#include "core/store/keystore.h"
#include "core/trace/outcome.h"

namespace idem::enforce {

/// The look a tier's cross_key asks for; nullopt when off. Under rollout observe a match never
/// blocks (observe refuses nothing), and a client's Idempotency-Duplicate-Confirmed: ?1 lets a
/// held match run (never a rejected one).
[[nodiscard]] std::optional<store::CrossKeyCheck> crossKeyCheck(const policy::Tier& tier, const http::Headers& headers);

/// Whether the headers carry Idempotency-Duplicate-Confirmed as the RFC 9651 boolean true (`?1`,
/// parameters allowed). Anything else is no confirmation.
[[nodiscard]] bool duplicateConfirmed(const http::Headers& headers);

/// What the trace records for a match: duplicate_held/_rejected when the tier answered,
/// duplicate_confirmed when the client said it meant a second operation, else duplicate_observed.
[[nodiscard]] trace::Outcome crossKeyOutcome(const store::ClaimResult& claim, const store::CrossKeyCheck& check,
                                             const policy::CrossKey& tier);

/// "matches key K1 (pay_X, 201), executed 40 s earlier; window 60s": for the trace's detail and
/// the client's problem.
[[nodiscard]] std::string matchDetail(const store::CrossKeyMatch& match, long long nowMs, const policy::CrossKey& tier);

/// The 409 a held or rejected match is answered with (#suspected-duplicate, #duplicate-rejected).
[[nodiscard]] Response duplicateProblem(const store::CrossKeyMatch& match, long long nowMs, const policy::CrossKey& tier,
                                        std::string_view docsUrl, std::string_view key);

}  // namespace idem::enforce
