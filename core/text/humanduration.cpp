#include "core/text/humanduration.h"

#include <cstdint>

namespace idem::text {
namespace {

constexpr std::uint64_t kMs = 1'000;
constexpr std::uint64_t kSecond = 1'000 * kMs;
constexpr std::uint64_t kMinute = 60 * kSecond;
constexpr std::uint64_t kHour = 60 * kMinute;
constexpr std::uint64_t kDay = 24 * kHour;

std::string count(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "3 min 20 s": `major` whole units, then the next unit down unless it is zero.
std::string twoUnits(std::uint64_t abs, std::uint64_t major, const char* one, const char* many, std::uint64_t minor,
                     const char* minorOne, const char* minorMany) {
  std::string out = count(abs / major, one, many);
  const std::uint64_t rest = (abs % major) / minor;
  if (rest != 0) out += " " + count(rest, minorOne, minorMany);
  return out;
}

}  // namespace

std::string humanDuration(std::chrono::microseconds d) {
  const auto c = d.count();
  // Magnitude and sign apart, so that the most negative count does not overflow on negation.
  const std::uint64_t abs = c < 0 ? static_cast<std::uint64_t>(-(c + 1)) + 1 : static_cast<std::uint64_t>(c);
  const std::string sign = c < 0 ? "-" : "";
  if (abs < kSecond) return sign + std::to_string(abs / kMs) + " ms";
  if (abs < 10 * kSecond) {
    const std::uint64_t tenths = abs / (kSecond / 10);
    return sign + std::to_string(tenths / 10) + (tenths % 10 ? "." + std::to_string(tenths % 10) : "") + " s";
  }
  if (abs < kMinute) return sign + std::to_string(abs / kSecond) + " s";
  if (abs < kHour) return sign + twoUnits(abs, kMinute, "min", "min", kSecond, "s", "s");
  if (abs < 48 * kHour) return sign + twoUnits(abs, kHour, "h", "h", kMinute, "min", "min");
  if (abs < 60 * kDay) return sign + twoUnits(abs, kDay, "day", "days", kHour, "h", "h");
  return sign + count(abs / kDay, "day", "days");
}

}  // namespace idem::text
