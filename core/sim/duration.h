#pragma once
// Durations in simulator configs ("500ms", "3s", "30m", "24h", "30d") and the simulator's
// clock unit. Parsing is idem::policy::parseDuration's (docs/design.md §4), in microseconds.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace idem::sim {

/// Simulated time and durations, in microseconds.
using Usec = std::int64_t;

inline constexpr Usec kUsecPerMs = 1000;
inline constexpr Usec kUsecPerSecond = 1000 * kUsecPerMs;

[[nodiscard]] inline double toSeconds(Usec t) { return static_cast<double>(t) / static_cast<double>(kUsecPerSecond); }

/// "<non-negative integer><ms|s|m|h|d>" -> microseconds; nullopt when malformed or too large.
[[nodiscard]] std::optional<Usec> parseDuration(std::string_view text);
/// The largest unit that writes d exactly: 1500000 -> "1500ms", 60000000 -> "1m".
[[nodiscard]] std::string formatDuration(Usec d);

}  // namespace idem::sim
