// Percentiles and recovery.
#include "core/sim/stats.h"

#include <algorithm>
#include <cmath>

namespace idem::sim {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(p * n));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

AttemptOffsets summarizeOffsets(int attempt, std::vector<double>& seconds) {
  std::sort(seconds.begin(), seconds.end());
  AttemptOffsets o;
  o.attempt = attempt;
  o.count = static_cast<std::int64_t>(seconds.size());
  o.p50 = percentile(seconds, 0.5);
  o.p90 = percentile(seconds, 0.9);
  o.p99 = percentile(seconds, 0.99);
  o.p999 = percentile(seconds, 0.999);
  o.max = seconds.empty() ? 0 : seconds.back();
  o.ecdf.reserve(21);
  for (int i = 0; i <= 20; ++i) o.ecdf.push_back(percentile(seconds, i / 20.0));
  return o;
}

Recovery judgeRecovery(const std::vector<SeriesRow>& series, double lastEventEndS, std::int64_t lastArrivalSecond) {
  constexpr std::int64_t kWindow = 5;
  constexpr double kRecovered = 0.9;
  Recovery r;
  r.lastEventEndS = lastEventEndS;
  const auto first = static_cast<std::int64_t>(std::ceil(lastEventEndS));
  const std::int64_t last = std::min<std::int64_t>(lastArrivalSecond, static_cast<std::int64_t>(series.size()) - 1);
  auto ratioAt = [&](std::int64_t s) {
    std::int64_t offered = 0;
    std::int64_t ok = 0;
    for (std::int64_t i = std::max<std::int64_t>(0, s - kWindow + 1); i <= s; ++i) {
      offered += series[static_cast<std::size_t>(i)].offered;
      ok += series[static_cast<std::size_t>(i)].successes;
    }
    return offered == 0 ? 1.0 : static_cast<double>(ok) / static_cast<double>(offered);
  };
  // Scan backwards: the earliest second from which every later window is good.
  std::optional<std::int64_t> from;
  for (std::int64_t s = last; s >= first; --s) {
    if (ratioAt(s) < kRecovered) break;
    from = s;
  }
  if (from) r.recoveredAfterS = static_cast<double>(*from + 1) - lastEventEndS;
  return r;
}

}  // namespace idem::sim
