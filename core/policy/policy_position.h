#pragma once
// Internal to core/policy: where a field sits in the policy file's text, so each problem the
// reader finds can say "line 7, column 14" as well as "tiers[0].ttl".
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace idem::policy::internal {

struct TextPosition {
  std::size_t line = 1, column = 1;  // 1-based; columns count bytes
};

/// Where each value of a JSON text (with // and /* */ comments) starts, by the field path the
/// reader writes ("tiers[0].routes[1]", "" for the document). The text must be valid JSON.
class FieldPositions {
 public:
  explicit FieldPositions(std::string_view text);
  /// The value at `field`; for a field the text does not have (a missing member), the nearest
  /// enclosing one that it has; the start of the text when there is none.
  [[nodiscard]] TextPosition at(const std::string& field) const;

 private:
  std::string_view m_text;
  std::map<std::string, std::size_t> m_offsets;
};

}  // namespace idem::policy::internal
