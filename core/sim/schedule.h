#pragma once
// One operation's retry schedule against one fault that never clears, the way `idemctl serve
// --allow-fault-injection`'s fault profiles present it to a real client (issue 20): the offsets
// of every retry from the first attempt, over many operations. The sleeps are the engine's
// (backoff.h); only the server is reduced to "every attempt fails the same way".
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sim/config.h"

namespace idem::sim {

struct FaultSpec {
  enum class Kind { Status, ConnectionError, Timeout };
  Kind kind = Kind::Status;
  int status = 500;
  std::optional<Usec> retryAfter;  // sent with every answer
};

/// The endpoint's profile names: "500", "503-retry-after-2", "409", "reset", "hang".
[[nodiscard]] std::optional<FaultSpec> parseFaultSpec(std::string_view profile);

/// The policy outcome bit a fault produces (0: none the simulator knows, never retried).
[[nodiscard]] unsigned outcomeOf(const FaultSpec& fault);

struct RetrySchedule {
  /// offsets[n-1]: seconds from the first attempt's arrival to retry n's, one per operation that got that far.
  std::vector<std::vector<double>> offsets;
  std::vector<int> attemptsPerOperation;
};

/// Runs `operations` independent operations (each its own client object, so a retry budget
/// never runs dry) against `fault`. latency: how long a failing answer takes to arrive.
[[nodiscard]] RetrySchedule simulateSchedule(const Policy& policy, const FaultSpec& fault, int operations,
                                             std::uint64_t seed, Usec latency = 0);

/// Shared budgets (AWS retry quota, gRPC throttling) are per client object: `operations`
/// operations fail together (every attempt, `fault`) on `clients` client objects, spread evenly.
/// Returns the retries made in all. clients == operations: one client each.
[[nodiscard]] std::int64_t retriesUnderSharedBudget(const Policy& policy, const FaultSpec& fault, int operations,
                                                    int clients);

}  // namespace idem::sim
