#pragma once
// A simulator scenario as the agent's case book keeps it: both policies, the server and the
// store, written in the simulator's own config JSON (core/sim/config_parse.h), so what is loaded
// is exactly what was saved and what `idemctl simulate` would read:
//   {"version": 1, "config": <policy A's whole config>, "policy_b": <policy B>, "compare": true}
#include <QString>
#include <optional>

#include "core/sim/config.h"

namespace idem::ui::sim {

struct SavedScenario {
  idem::sim::SimConfig a;  ///< clients, server, store and policy A
  idem::sim::Policy b;
  bool compare = true;  ///< "Compare with policy B" ticked
};

[[nodiscard]] QString scenarioToJson(const SavedScenario& scenario);
/// nullopt with *error set (naming the field) when json is not a scenario this console reads.
[[nodiscard]] std::optional<SavedScenario> scenarioFromJson(const QString& json, QString* error = nullptr);

}  // namespace idem::ui::sim
