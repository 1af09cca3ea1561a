#pragma once
// A service's name: which `serve`/`proxy` a key, a trace row and a chosen policy belong to
// (docs/store.md, "Services"). Part of every key's identity, so it is short and plain: it shows
// in logs, URLs' pages and the console, and is typed on command lines.
#include <string>
#include <string_view>

namespace idem::store {

/// The service of every enforcer that names none, and of every row from before schema 25.
inline constexpr const char* kDefaultService = "default";

/// The longest service name.
inline constexpr std::size_t kServiceNameMax = 63;

/// "" when `name` is a valid service name (1 to 63 of a-z 0-9 . _ -), else what is wrong.
[[nodiscard]] std::string serviceNameProblem(std::string_view name);

}  // namespace idem::store
