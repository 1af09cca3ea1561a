#pragma once
// Summaries computed once a run is over: percentiles of attempt offsets, recovery after a storm.
#include <vector>

#include "core/sim/result.h"

namespace idem::sim {

/// Nearest-rank percentile (p in [0, 1]) of an ascending-sorted sample; 0 when empty.
[[nodiscard]] double percentile(const std::vector<double>& sorted, double p);

/// Percentiles and a 21-point ECDF of one attempt number's offsets (sorts `seconds`).
[[nodiscard]] AttemptOffsets summarizeOffsets(int attempt, std::vector<double>& seconds);

/// The recovery criterion of result.h, judged on the per-second series up to the last second
/// that still had arrivals (lastArrivalSecond).
[[nodiscard]] Recovery judgeRecovery(const std::vector<SeriesRow>& series, double lastEventEndS,
                                     std::int64_t lastArrivalSecond);

}  // namespace idem::sim
