#pragma once
// Requests the upstream took and has not answered in time. The upstream may be executing them,
// so their keys are neither released nor run again: each keeps its ticket (whose lease the
// enforcer's LeaseKeeper keeps renewing, so retries get 409) while a background thread keeps
// reading for the answer, up to a bound. Then the ticket is settled with the answer, or, when
// none came, with a stored "outcome unknown" problem.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "core/enforce/enforcer.h"
#include "core/proxy/upstream.h"

namespace idem::proxy {

class LateAnswers {
 public:
  /// Ends a ticket with what became of its exchange: the answer (failure None), a connection that
  /// broke (Broken), or no answer within the bound or before shutdown (NoAnswer).
  using Settle = std::function<void(enforce::Ticket&, Sent)>;

  LateAnswers(std::chrono::milliseconds bound, std::size_t maxPending, Settle settle);
  ~LateAnswers();
  LateAnswers(const LateAnswers&) = delete;
  LateAnswers& operator=(const LateAnswers&) = delete;

  /// Takes the ticket and the exchange and waits for the answer in the background. False (both
  /// left with the caller, who settles the ticket itself) when maxPending already wait or the
  /// proxy is stopping.
  bool adopt(enforce::Ticket& ticket, std::unique_ptr<Exchange>& exchange);
  /// Stops waiting: every pending ticket is settled as NoAnswer now (shutdown).
  void finish();
  [[nodiscard]] std::size_t pending() const;

 private:
  struct Waiter {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  void wait(enforce::Ticket ticket, std::unique_ptr<Exchange> exchange, Waiter& self);

  std::chrono::milliseconds m_bound;
  std::size_t m_maxPending;
  Settle m_settle;
  mutable std::mutex m_mutex;
  std::list<Waiter> m_waiters;
  std::atomic<bool> m_stopping{false};
};

}  // namespace idem::proxy
