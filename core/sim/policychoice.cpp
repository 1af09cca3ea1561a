#include "core/sim/policychoice.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/sim/config_parse.h"
#include "core/sim/presets.h"

namespace idem::sim {

PolicyChoice choosePolicy(const std::string& item) {
  using nlohmann::json;
  if (const Preset* preset = findPreset(item))
    return {std::string(preset->name), parseConfig(json{{"policy", {{"preset", item}}}}).policy};
  std::ifstream in(item, std::ios::binary);
  if (!in) {
    std::string names;
    for (const auto& p : presets()) names += (names.empty() ? "" : ", ") + std::string(p.name);
    throw ConfigError("--policy", "'" + item + "' is neither a preset (" + names + ") nor a readable file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  json document;
  try {
    document = json::parse(text.str(), nullptr, true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    throw ConfigError("--policy " + item, std::string("not JSON: ") + e.what());
  }
  if (!document.is_object()) throw ConfigError("--policy " + item, "must be a JSON object");
  const json policy = document.contains("policy") ? document.at("policy") : document;
  try {
    return {std::filesystem::path(item).stem().string(), parseConfig(json{{"policy", policy}}).policy};
  } catch (const ConfigError& e) {
    throw ConfigError("--policy " + item, e.what());
  }
}

}  // namespace idem::sim
