#pragma once
// A retry policy in words, for people choosing between policies ("4 attempts; retries on
// timeouts and 5xx; exponential backoff from 500ms ×2, capped at 5s, full jitter; …"): the
// console's Measure view shows a fitted policy this way before it is loaded as policy A or B.
#include <string>

#include "core/sim/config.h"

namespace idem::sim {

[[nodiscard]] std::string describePolicy(const Policy& policy);

}  // namespace idem::sim
