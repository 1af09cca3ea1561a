#include "core/policy/duration.h"

#include <array>
#include <cstdint>
#include <limits>

namespace idem::policy {
namespace {

struct Unit {
  std::string_view suffix;  // as policy files write it
  std::int64_t ms;
};

// Largest first: formatDuration picks the first unit that divides exactly.
constexpr std::array<Unit, 5> kUnits{{{"d", 86'400'000}, {"h", 3'600'000}, {"m", 60'000}, {"s", 1'000}, {"ms", 1}}};

// Magnitude and sign kept apart so that the most negative count does not overflow on negation.
std::uint64_t magnitude(Millis d) {
  const auto c = d.count();
  return c < 0 ? static_cast<std::uint64_t>(-(c + 1)) + 1 : static_cast<std::uint64_t>(c);
}

}  // namespace

std::optional<Millis> parseDuration(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  const std::string_view suffix = text.substr(digits);
  for (const auto& unit : kUnits) {
    if (suffix != unit.suffix) continue;
    // Accumulate with an overflow check: "99999999999999999999d" is not a duration, not a wrap.
    const std::int64_t limit = std::numeric_limits<std::int64_t>::max() / unit.ms;
    std::int64_t value = 0;
    for (std::size_t i = 0; i < digits; ++i) {
      const int digit = text[i] - '0';
      if (value > (limit - digit) / 10) return std::nullopt;
      value = value * 10 + digit;
    }
    return Millis(value * unit.ms);
  }
  return std::nullopt;
}

std::string formatDuration(Millis d) {
  const std::string sign = d.count() < 0 ? "-" : "";
  const std::uint64_t abs = magnitude(d);
  if (abs == 0) return "0s";
  for (const auto& unit : kUnits) {
    const auto size = static_cast<std::uint64_t>(unit.ms);
    if (abs % size == 0) return sign + std::to_string(abs / size) + std::string(unit.suffix);
  }
  return sign + std::to_string(abs) + "ms";  // unreachable: ms divides everything
}

std::string toInterval(Millis d) {
  // Milliseconds always: one unit PostgreSQL's interval input reads exactly, with no month or
  // day arithmetic that could depend on the session's time zone.
  return std::to_string(d.count()) + " milliseconds";
}

}  // namespace idem::policy
