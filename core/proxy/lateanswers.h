#pragma once
// Requests the upstream took and has not answered in time. The upstream may be executing them,
// so their keys are neither released nor run again: each keeps its ticket (whose lease the
// enforcer's LeaseKeeper keeps renewing, so retries get 409) while its exchange keeps reading for
// the answer on the event loop — a timer and a pending read, no thread — up to a bound. Then the
// ticket is settled with the answer, or, when none came, with a stored "outcome unknown" problem.
// Each waiter holds one upstream connection, inside the pool's bound (--upstream-connections).
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/proxy/upstream.h"

namespace idem::proxy {

class LateAnswers {
 public:
  LateAnswers(std::chrono::milliseconds bound, std::size_t maxPending);
  LateAnswers(const LateAnswers&) = delete;
  LateAnswers& operator=(const LateAnswers&) = delete;

  /// Awaits the exchange's answer; `settle` gets it once, on the loop: the answer (None), a
  /// broken connection (Broken), or NoAnswer when the bound passes or the proxy stops. False
  /// (nothing taken: the caller settles now and cancels the exchange) when maxPending already
  /// wait or the proxy is stopping.
  bool adopt(const std::shared_ptr<Exchange>& exchange, OnSent settle);
  /// The proxy is stopping: every pending wait ends now as NoAnswer.
  void stop();
  [[nodiscard]] std::size_t pending() const;

 private:
  std::chrono::milliseconds m_bound;
  std::size_t m_maxPending;
  mutable std::mutex m_mutex;
  std::unordered_map<const Exchange*, std::shared_ptr<Exchange>> m_waiting;
  bool m_stopping = false;
};

}  // namespace idem::proxy
