#pragma once
// How sure a share measured on a sample is: the Wilson score interval (95 %), and the minimum
// sample below which Tiers shows what it counted but recommends nothing. A trace of a few dozen
// operations says little about one in a million: one late retry in 66 operations is anywhere
// from 2,680 to 81,000 per million, and the point value alone would read as a measurement.
#include <string>

namespace idem::tiers {

/// A range of a share (0..1) or of a rate derived from one.
struct Interval {
  double low = 0;
  double high = 0;
};

/// z for a two-sided 95 % interval.
inline constexpr double kZ95 = 1.959963984540054;

/// The Wilson score interval of `successes` out of `trials` (no continuity correction;
/// Newcombe 1998, method 3). {0, 0} when there are no trials; successes above trials count as
/// trials (a share cannot exceed 1).
[[nodiscard]] Interval wilson(long long successes, long long trials, double z = kZ95);

/// Below this many observed retries Tiers makes no recommendation: with fewer, even zero late
/// retries leave the 95 % range of the late share above one in nine (0 of 30: 0–11.4 %).
inline constexpr long long kMinRetriesToRecommend = 30;

/// The rule above, and what a window longer than the TTL means, in one short paragraph for
/// every place that shows Tiers' numbers (the console's view, `idemctl tiers`).
[[nodiscard]] std::string confidenceRule();

/// "2,680–81,000" (per million) and "0.27–8.1 %" (a share), from an interval.
[[nodiscard]] std::string humanPerMillionRange(const Interval& perMillion);
[[nodiscard]] std::string humanPercentRange(const Interval& share);

}  // namespace idem::tiers
