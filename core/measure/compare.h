#pragma once
// Holds a simulator policy to a measured schedule (issue 20): for every fault and retry, the
// measured min, median and max of the retry's offset must lie where the simulator puts them.
// With jitter, k measured operations are a sample: the simulator runs the same k operations
// many times and the measured statistic must fall inside the 5th-95th percentile band of the
// simulated one, widened by 10 % or 20 ms (whichever is larger). Without jitter the band is one
// point and the check is plain "within 10 % or 20 ms". Each failing answer takes the
// simulator's fast_latency (2 ms) to arrive, as in the engine.
//
// The max is held on its lower side only: a busy machine can make an attempt late (seen here:
// up to 0.5 s at load 10 on 2 cores), never early, so a measured max above the band says
// nothing about the policy; one below it does. Its upper side is reported (Check::late).
#include <string>
#include <vector>

#include "core/measure/attempts.h"

namespace idem::measure {

struct Check {
  std::string profile;
  int retry = 0;     // 0: the attempts per operation
  std::string what;  // "attempts", "min", "p50", "max"
  double measured = 0;
  double low = 0;  // the accepted range
  double high = 0;
  bool ok = false;
  bool late = false;  // a max above the band: reported, not failed
};

[[nodiscard]] std::vector<Check> compareSchedule(const sim::Policy& policy, const std::vector<FaultReport>& measured);

/// The faults of one client as `idemctl measure --format json` wrote them (its "faults" array).
[[nodiscard]] std::vector<FaultReport> faultsFromJson(const nlohmann::json& faults);

}  // namespace idem::measure
