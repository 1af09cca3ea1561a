#pragma once
// The simulator's answer in one sentence per policy — charges twice, can, or cannot — with its
// amplification, success and recovery: what the console's summary shows and what
// `idemctl simulate` prints first.
#include <string>

#include "core/sim/result.h"

namespace idem::sim {

enum class Exposure { ChargedTwice, CanChargeTwice, CannotChargeTwice };

struct Verdict {
  Exposure exposure = Exposure::CannotChargeTwice;
  std::string headline;  ///< "charges twice: 12 duplicates in 120,000 operations = 100.0 per million"
  std::string detail;    ///< the rest: horizon against TTL, amplification, success, recovery
};

[[nodiscard]] Verdict verdictOf(const Result& result);
/// headline and detail as one line.
[[nodiscard]] std::string verdictLine(const Result& result);

/// "40.0 min", "2.50 s", "150 ms".
[[nodiscard]] std::string humanSeconds(double seconds);

}  // namespace idem::sim
