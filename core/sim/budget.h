#pragma once
// Retry budgets shared by the whole simulated client population: a gRPC-style or AWS-style
// token bucket, or the SRE book's retry ratio ("Handling Overload": retries at most ~10% of
// requests), kept over a sliding window of one-second buckets.
#include <cstdint>
#include <vector>

#include "core/sim/config.h"

namespace idem::sim {

class RetryBudget final {
 public:
  explicit RetryBudget(const Budget& b);

  /// An operation sent its first attempt (ratio budget deposit).
  void onFirstAttempt(Usec now);
  /// An attempt failed with an outcome the policy retries (gRPC: costs one token).
  void onQualifiedFailure();
  /// An attempt succeeded. lastRetryCost: what the operation's last retry cost (AWS refund),
  /// or < 0 if it made no retry.
  void onSuccess(double lastRetryCost);
  /// May this retry go out? On yes the cost is taken and returned through *cost.
  [[nodiscard]] bool tryAcquire(Usec now, bool afterTimeout, double* cost);

  /// Tokens left (token buckets), for tests.
  [[nodiscard]] double tokens() const { return m_tokens; }

 private:
  void advance(Usec now);

  Budget m_b;
  double m_tokens = 0;
  // Ratio budget: per-second counts of first attempts and retries in the window.
  std::vector<std::int64_t> m_firsts;
  std::vector<std::int64_t> m_retries;
  std::int64_t m_sumFirsts = 0;
  std::int64_t m_sumRetries = 0;
  std::int64_t m_second = 0;
};

}  // namespace idem::sim
