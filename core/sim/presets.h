#pragma once
// Retry policies of real clients with their documented or source-code defaults.
#include <string_view>
#include <vector>

#include "core/sim/config.h"

namespace idem::sim {

struct Preset {
  std::string_view name;    // as written in "policy": {"preset": "..."}
  std::string_view title;   // for people: "Stripe SDK for Node.js (stripe-node)"
  std::string_view source;  // where the defaults were read (files and lines)
  /// The library version its schedule was measured against (tests/data/clients/<name>.json,
  /// tests/clients/run.sh), or why it could not be run here.
  std::string_view measured;
  Policy policy;
};

/// Old preset names that still load: "stripe" (now stripe-python), "aws-standard" (aws-botocore).
struct PresetAlias {
  std::string_view alias;
  std::string_view name;
};
[[nodiscard]] const std::vector<PresetAlias>& presetAliases();

/// Every preset, in a fixed order.
[[nodiscard]] const std::vector<Preset>& presets();
/// The preset called name (or an old name of it), or nullptr.
[[nodiscard]] const Preset* findPreset(std::string_view name);

}  // namespace idem::sim
