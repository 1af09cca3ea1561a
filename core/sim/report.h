#pragma once
// A simulation result as stable JSON (documented in core/sim/README.md) or as text for people.
#include <nlohmann/json.hpp>
#include <string>

#include "core/sim/result.h"

namespace idem::sim {

/// Key order is fixed; numbers derived by division are rounded to 6 decimals.
[[nodiscard]] nlohmann::ordered_json toJson(const Result& result);
/// A summary for a terminal: the verdict first, then totals, duplicates against the horizon,
/// recovery; a row per attempt number only withAttempts (a 100-attempt policy has 99 of them).
[[nodiscard]] std::string toText(const Result& result, bool withAttempts = false);
/// "stripe-node" for a preset, else "exponential backoff, full jitter".
[[nodiscard]] std::string policyLabel(const Policy& policy);

/// Could any retry arrive after its key was purged? Only if the horizon reaches TTL + purge lag.
[[nodiscard]] bool expiryDuplicatesPossible(const Result& result);

}  // namespace idem::sim
