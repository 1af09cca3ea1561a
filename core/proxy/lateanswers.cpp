#include "core/proxy/lateanswers.h"

namespace idem::proxy {

LateAnswers::LateAnswers(std::chrono::milliseconds bound, std::size_t maxPending, Settle settle)
    : m_bound(bound), m_maxPending(maxPending), m_settle(std::move(settle)) {}

LateAnswers::~LateAnswers() { finish(); }

std::size_t LateAnswers::pending() const {
  std::lock_guard lock(m_mutex);
  std::size_t n = 0;
  for (const auto& w : m_waiters) n += w.done.load() ? 0 : 1;
  return n;
}

bool LateAnswers::adopt(enforce::Ticket& ticket, std::unique_ptr<Exchange>& exchange) {
  std::lock_guard lock(m_mutex);
  if (m_stopping.load()) return false;
  // Reap the waiters that finished, so the list holds only what still waits.
  for (auto it = m_waiters.begin(); it != m_waiters.end();) {
    if (!it->done.load()) {
      ++it;
      continue;
    }
    it->thread.join();
    it = m_waiters.erase(it);
  }
  if (m_waiters.size() >= m_maxPending) return false;
  Waiter& w = m_waiters.emplace_back();
  w.thread = std::thread(
      [this, &w, t = std::move(ticket), ex = std::move(exchange)]() mutable { wait(std::move(t), std::move(ex), w); });
  return true;
}

void LateAnswers::wait(enforce::Ticket ticket, std::unique_ptr<Exchange> exchange, Waiter& self) {
  const auto giveUpAt = std::chrono::steady_clock::now() + m_bound;
  std::optional<Sent> outcome;
  // Short slices, so a shutdown is noticed quickly.
  while (!outcome && !m_stopping.load() && std::chrono::steady_clock::now() < giveUpAt)
    outcome = exchange->poll(std::chrono::milliseconds(100));
  exchange.reset();  // closes the connection: an answer after this is not read
  if (!outcome) {
    outcome.emplace();
    outcome->failure = Failure::NoAnswer;
    outcome->detail = m_stopping.load() ? "the proxy stopped before the upstream answered"
                                        : "the upstream never answered within the late-answer bound";
  }
  m_settle(ticket, std::move(*outcome));
  self.done = true;
}

void LateAnswers::finish() {
  m_stopping = true;
  std::list<Waiter> waiters;
  {
    std::lock_guard lock(m_mutex);
    waiters.splice(waiters.end(), m_waiters);
  }
  for (auto& w : waiters)
    if (w.thread.joinable()) w.thread.join();
}

}  // namespace idem::proxy
