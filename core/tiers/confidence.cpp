#include "core/tiers/confidence.h"

#include <algorithm>
#include <cmath>

#include "core/tiers/tiers.h"

namespace idem::tiers {
namespace {

/// "8.10 %" without its unit, for the low end of a range.
std::string withoutUnit(std::string s) {
  if (s.size() > 2 && s.ends_with(" %")) s.resize(s.size() - 2);
  return s;
}

}  // namespace

Interval wilson(long long successes, long long trials, double z) {
  if (trials <= 0) return {};
  const double n = static_cast<double>(trials);
  const double p = static_cast<double>(std::clamp(successes, 0LL, trials)) / n;
  const double z2 = z * z;
  const double denominator = 1 + z2 / n;
  const double centre = (p + z2 / (2 * n)) / denominator;
  const double half = z / denominator * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  // At 0 and at n the formula lands on the bound up to rounding; say it exactly.
  return {successes <= 0 ? 0.0 : std::max(0.0, centre - half), successes >= trials ? 1.0 : std::min(1.0, centre + half)};
}

std::string confidenceRule() {
  return "Ranges are 95 % Wilson intervals on what the trace holds. Tiers recommends a TTL only after " +
         std::to_string(kMinRetriesToRecommend) +
         " observed retries; below that it shows what it counted. A reference window longer than the TTL is a "
         "known exposure, whatever the trace shows.";
}

std::string humanPerMillionRange(const Interval& perMillion) {
  return humanPerMillion(perMillion.low) + "–" + humanPerMillion(perMillion.high);
}

std::string humanPercentRange(const Interval& share) {
  return withoutUnit(humanPercent(share.low)) + "–" + humanPercent(share.high);
}

}  // namespace idem::tiers
