#pragma once
// The built-in scenarios, one home for the console's scenario picker and `idemctl simulate
// --scenario`: a user-facing title, the config (clients, server, store and policy A) and the
// policy compared with it (B). core/sim/examples/ holds the same configs as files.
#include <string_view>
#include <vector>

#include "core/sim/config.h"

namespace idem::sim {

struct BuiltInScenario {
  std::string_view id;        ///< for the command line: "charge-twice"
  std::string_view title;     ///< for people: "Which one charges twice? (30 min TTL)"
  std::string_view config;    ///< JSON: clients, server, store and policy A
  std::string_view policyB;   ///< JSON policy object: what A is compared with
};

[[nodiscard]] const std::vector<BuiltInScenario>& builtInScenarios();
/// The scenario called id, or nullptr.
[[nodiscard]] const BuiltInScenario* findScenario(std::string_view id);
/// The scenario's config with policy A, and the same config with policy B.
[[nodiscard]] SimConfig scenarioConfig(const BuiltInScenario& scenario);
[[nodiscard]] Policy scenarioPolicyB(const BuiltInScenario& scenario);

}  // namespace idem::sim
