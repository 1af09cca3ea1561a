#pragma once
// Two or more policies run against the same scenario, side by side: a verdict line each, then
// one column per policy (duplicates, horizon against TTL, load, success, recovery), for
// `idemctl simulate --policy A,B`. JSON: {"runs": [{"name", "verdict", "result"}…]}.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/sim/result.h"

namespace idem::sim {

struct NamedResult {
  std::string name;  ///< what the user called the policy: a preset, a file, "A"
  Result result;
};

[[nodiscard]] std::string comparisonText(const std::vector<NamedResult>& runs);
[[nodiscard]] nlohmann::ordered_json comparisonJson(const std::vector<NamedResult>& runs);

}  // namespace idem::sim
