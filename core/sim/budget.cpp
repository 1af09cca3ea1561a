// Retry budgets.
#include "core/sim/budget.h"

#include <algorithm>

namespace idem::sim {

RetryBudget::RetryBudget(const Budget& b) : m_b(b), m_tokens(b.maxTokens) {
  if (m_b.type == Budget::Type::Ratio) {
    const auto seconds = std::max<Usec>(1, (m_b.window + kUsecPerSecond - 1) / kUsecPerSecond);
    m_firsts.assign(static_cast<std::size_t>(seconds), 0);
    m_retries.assign(static_cast<std::size_t>(seconds), 0);
  }
}

void RetryBudget::advance(Usec now) {
  const std::int64_t second = now / kUsecPerSecond;
  if (second <= m_second) return;
  const auto n = static_cast<std::int64_t>(m_firsts.size());
  // Buckets that slid out of the window are emptied (all of them after a long quiet gap).
  for (std::int64_t s = m_second + 1; s <= second && s <= m_second + n; ++s) {
    const auto i = static_cast<std::size_t>(s % n);
    m_sumFirsts -= m_firsts[i];
    m_sumRetries -= m_retries[i];
    m_firsts[i] = 0;
    m_retries[i] = 0;
  }
  m_second = second;
}

void RetryBudget::onFirstAttempt(Usec now) {
  if (m_b.type != Budget::Type::Ratio) return;
  advance(now);
  ++m_firsts[static_cast<std::size_t>(m_second % static_cast<std::int64_t>(m_firsts.size()))];
  ++m_sumFirsts;
}

void RetryBudget::onQualifiedFailure() {
  if (m_b.type == Budget::Type::TokenBucket && m_b.style == Budget::Style::Grpc) m_tokens = std::max(0.0, m_tokens - 1);
}

void RetryBudget::onSuccess(double lastRetryCost) {
  if (m_b.type != Budget::Type::TokenBucket) return;
  if (m_b.style == Budget::Style::Grpc) {
    m_tokens = std::min(m_b.maxTokens, m_tokens + m_b.ratio);
  } else {
    m_tokens = std::min(m_b.maxTokens, m_tokens + (lastRetryCost < 0 ? m_b.successCredit : lastRetryCost));
  }
}

bool RetryBudget::tryAcquire(Usec now, bool afterTimeout, double* cost) {
  *cost = 0;
  switch (m_b.type) {
    case Budget::Type::None:
      return true;
    case Budget::Type::TokenBucket:
      if (m_b.style == Budget::Style::Grpc) return m_tokens > m_b.maxTokens / 2;
      *cost = afterTimeout ? m_b.timeoutCost : m_b.retryCost;
      if (m_tokens < *cost) return false;
      m_tokens -= *cost;
      return true;
    case Budget::Type::Ratio: {
      advance(now);
      const double windowSeconds = static_cast<double>(m_firsts.size());
      const double allowed = m_b.ratio * static_cast<double>(m_sumFirsts) + m_b.minRetriesPerSecond * windowSeconds;
      if (static_cast<double>(m_sumRetries) + 1 > allowed) return false;
      ++m_retries[static_cast<std::size_t>(m_second % static_cast<std::int64_t>(m_retries.size()))];
      ++m_sumRetries;
      return true;
    }
  }
  return true;
}

}  // namespace idem::sim
