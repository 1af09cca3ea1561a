#pragma once
// Fits a simulator policy (core/sim/config.h) to measured retry schedules: which outcomes are
// retried, how many attempts, the backoff curve (base, multiplier, cap), the jitter, the
// timeout, and whether Retry-After is obeyed.
#include <string>
#include <vector>

#include "core/measure/attempts.h"

namespace idem::measure {

/// notes receives what could not be seen (e.g. a cap never reached, budgets).
[[nodiscard]] sim::Policy fitPolicy(const std::vector<FaultReport>& faults, std::vector<std::string>& notes);

}  // namespace idem::measure
