#pragma once
// Sleep before a retry: the backoff curves and the jitter formulas of Marc Brooker's
// "Exponential Backoff And Jitter" (AWS Architecture Blog, 2015), then Retry-After.
#include <optional>

#include "core/sim/config.h"
#include "core/sim/rng.h"

namespace idem::sim {

/// The un-jittered delay before retry n (n = 1 is the first retry), capped: none 0,
/// constant base, linear base*n, exponential base*multiplier^(n-1).
[[nodiscard]] double backoffCurve(const Policy& p, int retry);

/// Jitter over the capped curve value b, given a uniform u in [0, 1):
/// none b; full u*b ("random_between(0, b)"); equal b/2 + u*b/2.
[[nodiscard]] double applyJitter(Jitter j, double b, double u);

/// Brooker's decorrelated jitter: min(cap, random_between(base, previous * 3)); the first
/// previous sleep is base. Ignores the backoff curve (it grows by itself).
[[nodiscard]] double decorrelatedJitter(double base, std::optional<double> cap, double previous, double u);

/// Per-operation state a policy's sleeps depend on.
struct BackoffState {
  double previous = -1;  // decorrelated: last sleep in microseconds; < 0 before the first retry
};

/// The sleep before retry n, in microseconds: curve, jitter, then the min_delay floor.
[[nodiscard]] Usec backoffDelay(const Policy& p, int retry, BackoffState& state, Rng& rng);

/// The largest sleep backoffDelay can return for retry n (used by the horizon).
[[nodiscard]] double backoffUpperBound(const Policy& p, int retry);

/// The Retry-After a policy obeys for a header value ra: nullopt if it does not read the
/// header or ignores this value; clamped to retry_after_cap when the policy clamps.
[[nodiscard]] std::optional<Usec> honouredRetryAfter(const Policy& p, Usec ra);

/// Does a Retry-After of ra end the operation instead of a retry (over the cap, "give_up")?
[[nodiscard]] bool givesUpOn(const Policy& p, Usec ra);

/// Final sleep: backoff combined with an honoured Retry-After (max or replace).
[[nodiscard]] Usec combineWithRetryAfter(const Policy& p, Usec backoff, std::optional<Usec> retryAfter);

}  // namespace idem::sim
