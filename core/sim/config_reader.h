#pragma once
// Reading one JSON object of a simulation config field by field: values checked against their
// rule, errors naming the field, unknown fields reported. Shared by the config's parsers
// (config_parse.cpp, config_causes.cpp); private to core/sim.
#include <cmath>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sim/config_parse.h"

namespace idem::sim::config_detail {

using nlohmann::json;

template <typename E>
struct Named {
  std::string_view name;
  E value;
};

template <typename E, std::size_t N>
std::string_view nameOf(const Named<E> (&table)[N], E value) {
  for (const auto& n : table)
    if (n.value == value) return n.name;
  return "?";
}

template <typename E, std::size_t N>
std::string choices(const Named<E> (&table)[N]) {
  std::string out;
  for (const auto& n : table) out += (out.empty() ? "" : " | ") + std::string(n.name);
  return out;
}

/// Reads one JSON object; remembers which keys were read so the rest can be reported.
class Reader final {
 public:
  Reader(const json& value, std::string path) : m_value(value), m_path(std::move(path)) {
    if (!m_value.is_object()) throw ConfigError(m_path.empty() ? "(top level)" : m_path, "must be an object");
  }

  [[nodiscard]] std::string field(std::string_view key) const {
    return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
  }
  [[nodiscard]] bool has(std::string_view key) {
    m_seen.insert(std::string(key));
    return m_value.contains(key);
  }
  [[nodiscard]] const json& at(std::string_view key) const { return m_value.at(key); }
  [[nodiscard]] bool isNull(std::string_view key) const { return m_value.at(key).is_null(); }

  void number(std::string_view key, double& out, double min, double max, std::string_view rule) {
    if (!has(key)) return;
    const json& v = at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < min || v.get<double>() > max)
      throw ConfigError(field(key), "must be " + std::string(rule));
    out = v.get<double>();
  }

  template <typename Int>
  void integer(std::string_view key, Int& out, std::int64_t min, std::int64_t max) {
    if (!has(key)) return;
    const json& v = at(key);
    const std::string rule = "must be an integer from " + std::to_string(min) + " to " + std::to_string(max);
    if (!v.is_number_integer()) throw ConfigError(field(key), rule);
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
      throw ConfigError(field(key), rule);
    const auto i = v.get<std::int64_t>();
    if (i < min || i > max) throw ConfigError(field(key), rule);
    out = static_cast<Int>(i);
  }

  void boolean(std::string_view key, bool& out) {
    if (!has(key)) return;
    if (!at(key).is_boolean()) throw ConfigError(field(key), "must be true or false");
    out = at(key).get<bool>();
  }

  Usec durationValue(std::string_view key, bool positive) const {
    const json& v = at(key);
    const std::string rule = std::string("must be a duration such as \"500ms\", \"3s\", \"30m\", \"24h\"") +
                             (positive ? " (more than 0)" : "");
    if (!v.is_string()) throw ConfigError(field(key), rule);
    const auto d = parseDuration(v.get<std::string>());
    if (!d || (positive && *d == 0)) throw ConfigError(field(key), rule);
    return *d;
  }

  void duration(std::string_view key, Usec& out, bool positive = false) {
    if (has(key)) out = durationValue(key, positive);
  }

  /// A duration that may be null ("none").
  void optionalDuration(std::string_view key, std::optional<Usec>& out, bool positive) {
    if (!has(key)) return;
    if (isNull(key)) {
      out = std::nullopt;
      return;
    }
    const json& v = at(key);
    if (!v.is_string()) {
      throw ConfigError(field(key), "must be a duration such as \"3s\", or null for none");
    }
    out = durationValue(key, positive);
  }

  template <typename E, std::size_t N>
  void choice(std::string_view key, const Named<E> (&table)[N], E& out) {
    if (!has(key)) return;
    const json& v = at(key);
    if (v.is_string()) {
      for (const auto& n : table)
        if (n.name == v.get<std::string>()) {
          out = n.value;
          return;
        }
    }
    throw ConfigError(field(key), "must be one of " + choices(table));
  }

  /// Reports the first key that nothing read.
  void finish() const {
    for (const auto& [key, value] : m_value.items())
      if (m_seen.find(key) == m_seen.end()) throw ConfigError(field(key), "unknown field");
  }

 private:
  const json& m_value;
  std::string m_path;
  std::set<std::string, std::less<>> m_seen;
};

// The config's spelling of each choice.
inline constexpr Named<Backoff> kBackoffs[] = {{"none", Backoff::None},
                                        {"constant", Backoff::Constant},
                                        {"linear", Backoff::Linear},
                                        {"exponential", Backoff::Exponential}};
inline constexpr Named<Jitter> kJitters[] = {
    {"none", Jitter::None}, {"full", Jitter::Full}, {"equal", Jitter::Equal}, {"decorrelated", Jitter::Decorrelated}};
inline constexpr Named<RetryAfterMode> kRetryAfterModes[] = {
    {"ignore", RetryAfterMode::Ignore}, {"max", RetryAfterMode::Max}, {"replace", RetryAfterMode::Replace}};
inline constexpr Named<OverCap> kOverCaps[] = {
    {"clamp", OverCap::Clamp}, {"ignore", OverCap::Ignore}, {"give_up", OverCap::GiveUp}};
inline constexpr Named<Store::StoredAt> kStoredAts[] = {{"first_receipt", Store::StoredAt::FirstReceipt},
                                                 {"completion", Store::StoredAt::Completion}};
inline constexpr Named<unsigned> kOutcomes[] = {{"timeout", kTimeout}, {"connection_error", kConnectionError},
                                         {"409", kConflict409}, {"5xx", kStatus5xx},
                                         {"500", kStatus500},   {"503", kStatus503}};


/// "budget": {...} or null, beside the fields r reads.
void parseBudget(Reader& parent, Budget& b);
/// A list of outcomes (["timeout", "5xx", "409"]) under key, as Outcome bits.
[[nodiscard]] unsigned parseRetryOn(Reader& r, std::string_view key = "retry_on");
[[nodiscard]] std::vector<std::string> outcomeNames(unsigned bits);
[[nodiscard]] nlohmann::ordered_json budgetToJson(const Budget& b);

// The causes of duplicates across keys (config_causes.cpp).
[[nodiscard]] CrossKey parseCrossKey(const json& value, const std::string& path);
[[nodiscard]] Intermediary parseIntermediary(const json& value);
[[nodiscard]] Hedging parseHedging(const json& value);
[[nodiscard]] nlohmann::ordered_json crossKeyToJson(const CrossKey& c);
[[nodiscard]] nlohmann::ordered_json intermediaryToJson(const Intermediary& i);
[[nodiscard]] nlohmann::ordered_json hedgingToJson(const Hedging& h);

}  // namespace idem::sim::config_detail
