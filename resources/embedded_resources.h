#pragma once
// Files from resources/ compiled into the binary (see resources/embed.cmake).
#include <optional>
#include <string_view>
#include <vector>

namespace idem::resources {
/// The content of a resource by its path under resources/, e.g. "migrations/0001_init.sql".
[[nodiscard]] std::optional<std::string_view> find(std::string_view path);
/// Resource paths starting with prefix, sorted by name.
[[nodiscard]] std::vector<std::string_view> list(std::string_view prefix);
}  // namespace idem::resources
