#pragma once
// Internal to core/policy: typed fields of a policy document, each failure a PolicyError that
// names the file and the field path ("tiers[1].ttl") and says what to write instead. The
// document reader (policy_parse.cpp) and the readers of single members (policy_sameness.h)
// share them, so a message reads the same whichever member it is about.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/policy/duration.h"

namespace idem::policy::internal {

class FieldReader {
 public:
  explicit FieldReader(const std::string& source) : m_source(source) {}

  [[nodiscard]] const std::string& source() const { return m_source; }
  [[noreturn]] void fail(const std::string& path, const std::string& message) const;

  /// The member, or nullptr when the object does not have it.
  [[nodiscard]] static const nlohmann::json* optional(const nlohmann::json& object, std::string_view name);
  /// The member; missing, a problem that says what it means.
  [[nodiscard]] const nlohmann::json& required(const nlohmann::json& object, const std::string& path,
                                               std::string_view name, std::string_view meaning) const;
  /// `v` when it has `type`; else "must be <wanted>, not <its type> (<value>)".
  const nlohmann::json& expect(const nlohmann::json& v, const std::string& path, nlohmann::json::value_t type,
                               std::string_view wanted) const;
  [[nodiscard]] std::string str(const nlohmann::json& v, const std::string& path) const;
  /// A positive duration within kMaxDuration, written as the policy writes them ("24h").
  [[nodiscard]] Millis duration(const nlohmann::json& v, const std::string& path) const;
  /// An array of HTTP field names, each once (case-insensitively).
  [[nodiscard]] std::vector<std::string> headerNames(const nlohmann::json& v, const std::string& path) const;

 private:
  const std::string& m_source;
};

}  // namespace idem::policy::internal
