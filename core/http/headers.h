#pragma once
// HTTP header list as the enforcement core sees it: framework-agnostic, order kept.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace idem::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// ASCII case-insensitive comparison (header names).
[[nodiscard]] inline bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

/// The first header with this name (case-insensitive), if any.
[[nodiscard]] inline std::optional<std::string_view> findHeader(const Headers& headers, std::string_view name) {
  for (const auto& [n, v] : headers)
    if (equalsIgnoreCase(n, name)) return std::string_view(v);
  return std::nullopt;
}

/// How many headers carry this name (a repeated Idempotency-Key is malformed).
[[nodiscard]] inline int countHeader(const Headers& headers, std::string_view name) {
  int n = 0;
  for (const auto& h : headers) n += equalsIgnoreCase(h.first, name) ? 1 : 0;
  return n;
}

}  // namespace idem::http
