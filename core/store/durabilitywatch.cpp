#include "core/store/durabilitywatch.h"

namespace idem::store {

Durability DurabilityWatch::refresh() {
  auto d = m_pool.withRetry([](pg::Connection& c) { return probeDurability(c); });
  std::lock_guard lock(m_mutex);
  m_last = d;
  m_readAt = std::chrono::steady_clock::now();
  return d;
}

std::optional<Durability> DurabilityWatch::current() {
  {
    std::lock_guard lock(m_mutex);
    if (m_last && std::chrono::steady_clock::now() - m_readAt < m_maxAge) return m_last;
  }
  if (m_reading.exchange(true)) {
    std::lock_guard lock(m_mutex);
    return m_last;
  }
  try {
    refresh();
  } catch (const pg::Error&) {
    // Unreachable now: the claim that follows says so; keep the last reading.
  }
  m_reading = false;
  std::lock_guard lock(m_mutex);
  return m_last;
}

}  // namespace idem::store
