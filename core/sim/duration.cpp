// Duration parsing for simulator configs.
#include "core/sim/duration.h"

#include <cmath>
#include <limits>

namespace idem::sim {

namespace {
struct Unit {
  std::string_view suffix;
  Usec usec;
};
// Longest suffix first so "ms" is not read as "m" + "s".
constexpr Unit kUnits[] = {{"ms", kUsecPerMs},
                           {"s", kUsecPerSecond},
                           {"m", 60 * kUsecPerSecond},
                           {"h", 3600 * kUsecPerSecond},
                           {"d", 86400 * kUsecPerSecond}};
// A century is far beyond any TTL or backoff a config could sensibly hold.
constexpr Usec kMaxDuration = 36500LL * 86400 * kUsecPerSecond;
}  // namespace

Usec fromSeconds(double seconds) {
  const double us = std::round(seconds * static_cast<double>(kUsecPerSecond));
  if (!(us < static_cast<double>(kMaxDuration))) return kMaxDuration;
  return us < 0 ? 0 : static_cast<Usec>(us);
}

std::optional<Usec> parseDuration(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 15) return std::nullopt;
  const std::string_view suffix = text.substr(digits);
  for (const auto& unit : kUnits) {
    if (suffix != unit.suffix) continue;
    Usec value = 0;
    for (std::size_t i = 0; i < digits; ++i) value = value * 10 + (text[i] - '0');
    if (value > kMaxDuration / unit.usec) return std::nullopt;
    return value * unit.usec;
  }
  return std::nullopt;
}

std::string formatDuration(Usec d) {
  if (d % kUsecPerMs != 0) return std::to_string(d) + "us";
  for (auto it = std::rbegin(kUnits); it != std::rend(kUnits); ++it) {
    if (d != 0 && d % it->usec == 0) return std::to_string(d / it->usec) + std::string(it->suffix);
  }
  return std::to_string(d / kUsecPerMs) + "ms";
}

}  // namespace idem::sim
