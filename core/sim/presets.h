#pragma once
// Retry policies of real clients with their documented or source-code defaults.
#include <string_view>
#include <vector>

#include "core/sim/config.h"

namespace idem::sim {

struct Preset {
  std::string_view name;    // as written in "policy": {"preset": "..."}
  std::string_view title;   // for people: "Stripe SDK (stripe-python / stripe-node)"
  std::string_view source;  // where the defaults were read
  Policy policy;
};

/// Every preset, in a fixed order.
[[nodiscard]] const std::vector<Preset>& presets();
/// The preset called name, or nullptr.
[[nodiscard]] const Preset* findPreset(std::string_view name);

}  // namespace idem::sim
