#pragma once
// What `idemctl simulate --policy X` names: a preset ("stripe-node") or a JSON file holding a
// policy object or a whole config (its "policy" is taken). Compared policies all run against
// the same scenario, so comparing two no longer means editing a file.
#include <string>

#include "core/sim/config.h"

namespace idem::sim {

struct PolicyChoice {
  std::string name;  ///< the preset, or the file's name without folder and extension
  Policy policy;
};

/// Throws ConfigError naming the item when it is neither a preset nor a readable policy file.
[[nodiscard]] PolicyChoice choosePolicy(const std::string& item);

}  // namespace idem::sim
