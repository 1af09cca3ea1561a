// Durations for simulator configs: the policy file's spelling, in microseconds.
#include "core/sim/duration.h"

#include "core/policy/duration.h"

namespace idem::sim {

namespace {
struct Unit {
  std::string_view suffix;
  Usec usec;
};
// Smallest first; formatDuration walks it from the largest.
constexpr Unit kUnits[] = {{"ms", kUsecPerMs},
                           {"s", kUsecPerSecond},
                           {"m", 60 * kUsecPerSecond},
                           {"h", 3600 * kUsecPerSecond},
                           {"d", 86400 * kUsecPerSecond}};
// A century is far beyond any TTL or backoff a config could sensibly hold.
constexpr Usec kMaxDuration = 36500LL * 86400 * kUsecPerSecond;
}  // namespace

std::optional<Usec> parseDuration(std::string_view text) {
  const auto ms = policy::parseDuration(text);
  if (!ms || ms->count() < 0 || ms->count() > kMaxDuration / kUsecPerMs) return std::nullopt;
  return ms->count() * kUsecPerMs;
}

std::string formatDuration(Usec d) {
  if (d % kUsecPerMs != 0) return std::to_string(d) + "us";
  for (auto it = std::rbegin(kUnits); it != std::rend(kUnits); ++it) {
    if (d != 0 && d % it->usec == 0) return std::to_string(d / it->usec) + std::string(it->suffix);
  }
  return std::to_string(d / kUsecPerMs) + "ms";
}

}  // namespace idem::sim
