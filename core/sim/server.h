#pragma once
// The server side of the model: answer latency, a capacity limit with a FIFO queue, and
// spikes/outages over time. Work a client stopped waiting for is still done.
#include <vector>

#include "core/sim/config.h"
#include "core/sim/rng.h"

namespace idem::sim {

/// Log-normal latency fitted from its median and 99th percentile:
/// mu = ln(median), sigma = ln(p99 / median) / z(0.99).
class LatencyModel final {
 public:
  LatencyModel(Usec median, Usec p99);
  [[nodiscard]] Usec sample(Rng& rng) const;
  [[nodiscard]] double mu() const { return m_mu; }
  [[nodiscard]] double sigma() const { return m_sigma; }

 private:
  double m_mu = 0;
  double m_sigma = 0;
};

class ServerModel final {
 public:
  explicit ServerModel(const Server& s);

  /// The outage active at t, or nullptr.
  [[nodiscard]] const ServerEvent* outageAt(Usec t) const;
  /// Probability that an attempt handled at t fails before execution starts.
  [[nodiscard]] double failureRateAt(Usec t) const;
  /// Retry-After on a 503 sent at t: the active event's, else the server's.
  [[nodiscard]] Usec retryAfter503At(Usec t) const;
  /// A request arrives at t: when its handler starts (FIFO behind earlier requests, one
  /// request per 1/capacity_rps seconds; immediately when capacity is unlimited).
  [[nodiscard]] Usec admit(Usec t);
  /// How long a request arriving at t would queue.
  [[nodiscard]] Usec queueWait(Usec t) const;
  [[nodiscard]] Usec executionLatency(Rng& rng) const { return m_latency.sample(rng); }
  [[nodiscard]] const Server& config() const { return m_s; }

 private:
  Server m_s;
  LatencyModel m_latency;
  std::vector<const ServerEvent*> m_outages;
  std::vector<const ServerEvent*> m_failureWindows;
  std::vector<const ServerEvent*> m_retryAfterWindows;
  double m_slot = 0;       // microseconds per request; 0 = unlimited
  double m_busyUntil = 0;  // when the queue ahead of a new request empties
};

}  // namespace idem::sim
