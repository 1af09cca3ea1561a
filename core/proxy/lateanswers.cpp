#include "core/proxy/lateanswers.h"

#include <vector>

namespace idem::proxy {

LateAnswers::LateAnswers(std::chrono::milliseconds bound, std::size_t maxPending)
    : m_bound(bound), m_maxPending(maxPending) {}

std::size_t LateAnswers::pending() const {
  std::lock_guard lock(m_mutex);
  return m_waiting.size();
}

bool LateAnswers::adopt(const std::shared_ptr<Exchange>& exchange, OnSent settle) {
  {
    std::lock_guard lock(m_mutex);
    if (m_stopping || m_waiting.size() >= m_maxPending) return false;
    m_waiting.emplace(exchange.get(), exchange);
  }
  exchange->awaitLate(m_bound, [this, key = exchange.get(), settle = std::move(settle)](Sent s) {
    {
      std::lock_guard lock(m_mutex);
      m_waiting.erase(key);
    }
    settle(std::move(s));
  });
  return true;
}

void LateAnswers::stop() {
  std::vector<std::shared_ptr<Exchange>> waiting;
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
    for (auto& [key, exchange] : m_waiting) waiting.push_back(exchange);
  }
  for (auto& e : waiting) e->cancel();
}

}  // namespace idem::proxy
