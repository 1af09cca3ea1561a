#pragma once
// Durations for people, one rule everywhere they are read (the explanation, the published
// policy page, idemctl's reports, the console):
//
//   under 1 s     "850 ms"
//   under 10 s    "4.5 s"  tenths, left out when whole ("2 s")
//   under 1 min   "45 s"
//   under 1 h     "3 min 20 s", "3 min"
//   under 48 h    "26 h 12 min", "24 h"    (a day's TTL reads as configured)
//   under 60 days "3 days 2 h", "2 days"
//   from 60 days  "90 days", "400 days"    (whole days)
//
// The largest unit and the next one down, the smaller left out when zero. Always truncated,
// never rounded up: a TTL of 1 h 59 min 59 s never reads "2 h". Negative spans get a "-".
// A policy file's own spelling ("24h", "30d") is policy::formatDuration, not this.
#include <chrono>
#include <string>

namespace idem::text {

[[nodiscard]] std::string humanDuration(std::chrono::microseconds d);

}  // namespace idem::text
