#pragma once
// The worst-case retry horizon H of a policy: the latest time after an operation's first
// attempt at which another attempt can still be sent. A key that outlives H (TTL + purge lag
// > H, counted from when the key is stored, which is never before the first attempt) cannot
// be purged under a retry, so no retry can execute the operation a second time.
#include <optional>
#include <string_view>

#include "core/sim/config.h"

namespace idem::sim {

struct Horizon {
  std::optional<Usec> value;   // nullopt: unbounded (no timeout or an uncapped wait, no deadline)
  std::string_view boundedBy;  // "single_attempt" | "attempts" | "deadline" | "unbounded"
};

/// Sum over retries n = 1..max_attempts-1 of (per-attempt timeout + largest sleep before retry
/// n), the sleep being the larger of the backoff's upper bound and retry_after_cap when the
/// policy honours Retry-After on outcomes it retries; then at most the deadline.
[[nodiscard]] Horizon retryHorizon(const Policy& p);

}  // namespace idem::sim
