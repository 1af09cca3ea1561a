#pragma once
// Numbers for people: thousands separated ("120,000") and fixed decimals ("466.7"), the same
// in every report (tiers, the simulator).
#include <string>

namespace idem::text {

/// "120,000", "-1,024", "7".
[[nodiscard]] std::string withThousands(long long n);
/// v with `decimals` digits after the point: fixed(466.66, 1) == "466.7".
[[nodiscard]] std::string fixed(double v, int decimals);

}  // namespace idem::text
