#pragma once
// Durations as policy files write them: 250ms, 2s, 30m, 24h, 30d.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace idem::policy {

using Millis = std::chrono::milliseconds;

/// "250ms" | "2s" | "30m" | "24h" | "30d" (a non-negative integer and one unit). nullopt otherwise.
[[nodiscard]] std::optional<Millis> parseDuration(std::string_view text);
/// The largest unit that writes d exactly: 86400000 -> "1d", 90000 -> "90s", 1500 -> "1500ms".
[[nodiscard]] std::string formatDuration(Millis d);
/// PostgreSQL interval literal for a bound parameter: "86400000 milliseconds".
[[nodiscard]] std::string toInterval(Millis d);

}  // namespace idem::policy
