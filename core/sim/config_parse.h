#pragma once
// Simulator config from JSON (comments allowed). Unknown fields and bad values are errors
// that name the field, e.g. "policy.budget.max_tokens: must be a number >= 1".
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/sim/config.h"

namespace idem::sim {

class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string field, const std::string& message)
      : std::runtime_error(field.empty() ? message : field + ": " + message), m_field(std::move(field)) {}
  /// Dotted path of the offending field ("server.events[1].at"); empty for JSON syntax errors.
  [[nodiscard]] const std::string& field() const { return m_field; }

 private:
  std::string m_field;
};

/// Reads a config document. "policy": {"preset": "stripe", ...} starts from that preset and
/// applies the other policy fields over it.
[[nodiscard]] SimConfig parseConfig(const nlohmann::json& document);
/// Parses JSON text (comments allowed), then parseConfig.
[[nodiscard]] SimConfig parseConfigText(std::string_view text);

/// The config as it will run, in the input's shape (presets resolved), for reports.
[[nodiscard]] nlohmann::ordered_json configToJson(const SimConfig& config);
/// A policy in the input's shape.
[[nodiscard]] nlohmann::ordered_json policyToJson(const Policy& policy);

/// Names used in the config: "exponential", "full", "max", "first_receipt", ...
[[nodiscard]] std::string_view backoffName(Backoff b);
[[nodiscard]] std::string_view jitterName(Jitter j);
[[nodiscard]] std::string_view retryAfterModeName(RetryAfterMode m);
/// "off" | "observe" | "hold" | "reject".
[[nodiscard]] std::string_view crossKeyModeName(CrossKey::Mode m);

}  // namespace idem::sim
