#pragma once
// What a simulation reports. Times are in seconds unless a name says otherwise.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/sim/config.h"
#include "core/sim/horizon.h"

namespace idem::sim {

/// When retry attempt number `attempt` (2 = first retry) was sent, after the first attempt.
struct AttemptOffsets {
  int attempt = 0;
  std::int64_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  std::vector<double> ecdf;  // 21 quantiles: 0%, 5%, ..., 100%
};

/// Per-second counts; index i covers [i s, i+1 s).
struct SeriesRow {
  std::int64_t offered = 0;    // operations that started
  std::int64_t attempts = 0;   // attempts sent (first attempts and retries)
  std::int64_t successes = 0;  // operations that got a 2xx
  std::int64_t retries = 0;    // attempts after the first
  std::int64_t timeouts = 0;   // attempts the client stopped waiting for
  std::int64_t inFlight = 0;   // requests at the server (queued or running) at the end of the second
  double queueWaitS = 0;       // queue wait a request arriving at the end of the second would see
};

/// After the last spike or outage: when did the system serve its clients again?
struct Recovery {
  double lastEventEndS = 0;
  /// Seconds from the end of the last event to the end of the first second s (s >= the event's
  /// end) such that the success ratio over the 5 s window ending with s (successes / offered)
  /// and over every later window is at least 0.9, while operations keep arriving; nullopt if
  /// the ratio was still below 0.9 at the last second with arrivals.
  std::optional<double> recoveredAfterS;
};

struct Failures {
  std::int64_t retriesExhausted = 0;  // max_attempts reached
  std::int64_t notRetryable = 0;      // an outcome retry_on does not list
  std::int64_t deadline = 0;          // the next attempt would start after the deadline
  std::int64_t budget = 0;            // the retry budget refused the retry
};

/// The same request under another key (config store.cross_key, clients.new_key_on_retry).
struct CrossKeyCounts {
  std::int64_t matches = 0;            // first attempts of a key matching another key's execution
  std::int64_t legitimateMatches = 0;  // of which: an operation that was the same request on purpose
  std::int64_t held = 0;               // answered 409 (hold)
  std::int64_t rejected = 0;           // refused (reject): the operation ends
  std::int64_t legitimateRefused = 0;  // operations meant to run twice that never ran (held or rejected to the end)
};

/// The same scenario run once more with detection switched the other way (off when the config
/// holds or rejects, hold when it is off or observes), so a report shows both.
struct CrossKeyCounterpart {
  CrossKey::Mode mode = CrossKey::Mode::Off;
  std::int64_t duplicates = 0;
  std::int64_t duplicatesNewKey = 0;
  std::int64_t legitimateRefused = 0;
};

struct Result {
  SimConfig config;  // as run (preset resolved)
  std::int64_t operations = 0;
  std::int64_t attempts = 0;
  std::int64_t successes = 0;
  Failures failures;
  std::int64_t timeouts = 0;
  std::int64_t connectionErrors = 0;  // before reaching the server, or an answer lost after execution
  std::int64_t lostResponses = 0;     // of which: executed, answer lost
  std::int64_t conflicts409 = 0;      // 409 answers sent by the server
  std::int64_t status500 = 0;
  std::int64_t status503 = 0;
  std::int64_t replays = 0;  // stored answers replayed
  std::int64_t executions = 0;
  std::int64_t duplicates = 0;               // executions beyond the first, all causes
  std::int64_t duplicatesAfterPurge = 0;     // a retry came after the key was purged
  std::int64_t duplicatesConcurrent = 0;     // stored_at completion: a retry while the first ran
  std::int64_t duplicatesLeaseTakeover = 0;  // a retry found the lease expired
  std::int64_t duplicatesNewKey = 0;         // a retry under a new key executed again
  std::int64_t newKeyRetries = 0;            // retries the client sent under a new key
  std::int64_t intermediaryRetries = 0;      // tries an intermediary added (in attempts)
  std::int64_t hedgedCopies = 0;             // extra copies hedging sent (in attempts)
  CrossKeyCounts crossKey;
  std::optional<CrossKeyCounterpart> counterpart;
  Horizon horizon;
  Usec maxQueueWait = 0;
  Usec simulatedUntil = 0;  // time of the last event
  std::vector<AttemptOffsets> offsets;
  std::vector<SeriesRow> series;
  std::optional<Recovery> recovery;  // only when the config has events
  bool cancelled = false;

  [[nodiscard]] double amplification() const {
    return operations == 0 ? 0 : static_cast<double>(attempts) / static_cast<double>(operations);
  }
  [[nodiscard]] double successRate() const {
    return operations == 0 ? 0 : static_cast<double>(successes) / static_cast<double>(operations);
  }
  [[nodiscard]] double duplicatesPerMillion() const {
    return operations == 0 ? 0 : 1e6 * static_cast<double>(duplicates) / static_cast<double>(operations);
  }
};

}  // namespace idem::sim
