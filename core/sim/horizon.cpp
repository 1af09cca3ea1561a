// Analytic worst-case retry horizon.
#include "core/sim/horizon.h"

#include <algorithm>
#include <cmath>

#include "core/sim/backoff.h"

namespace idem::sim {

Horizon retryHorizon(const Policy& p) {
  if (p.maxAttempts <= 1) return {Usec{0}, "single_attempt"};

  // A Retry-After can only stretch a sleep after an answer that carries one (409, 503).
  const bool retryAfterMatters =
      p.retryAfter != RetryAfterMode::Ignore && (p.retryOn & (kConflict409 | kStatus503)) != 0;
  bool unbounded = !p.timeout.has_value();  // waiting for ever for an answer
  double retryAfterUpper = 0;
  if (retryAfterMatters) {
    if (p.retryAfterCap) {
      retryAfterUpper = static_cast<double>(*p.retryAfterCap);
    } else {
      unbounded = true;  // any Retry-After is obeyed
    }
  }

  double total = 0;
  if (!unbounded) {
    for (int n = 1; n < p.maxAttempts; ++n) {
      const double sleep = std::max(backoffUpperBound(p, n), retryAfterUpper);
      total += static_cast<double>(*p.timeout) + sleep;
    }
  }
  if (p.deadline && (unbounded || total >= static_cast<double>(*p.deadline))) return {*p.deadline, "deadline"};
  if (unbounded) return {std::nullopt, "unbounded"};
  return {static_cast<Usec>(std::llround(total)), "attempts"};
}

}  // namespace idem::sim
