#include "core/store/pool.h"

namespace idem::store {

Pool::Pool(std::string conninfo, int maxSize, std::chrono::milliseconds acquireTimeout)
    : m_conninfo(std::move(conninfo)), m_maxSize(maxSize < 1 ? 1 : maxSize), m_acquireTimeout(acquireTimeout) {}

Pool::~Pool() {
  std::lock_guard lock(m_mutex);
  m_idle.clear();
}

Pool::Lease::~Lease() {
  if (m_conn) m_pool->giveBack(std::move(m_conn), m_broken || !m_conn->healthy());
}

Pool::Lease Pool::acquire() {
  std::unique_lock lock(m_mutex);
  const auto deadline = std::chrono::steady_clock::now() + m_acquireTimeout;
  for (;;) {
    if (!m_idle.empty()) {
      auto conn = std::move(m_idle.back());
      m_idle.pop_back();
      return Lease(this, std::move(conn), true);
    }
    if (m_open < m_maxSize) {
      ++m_open;
      lock.unlock();  // connecting takes a round trip or a timeout: never under the lock
      try {
        return Lease(this, std::make_unique<pg::Connection>(m_conninfo), false);
      } catch (...) {
        lock.lock();
        --m_open;
        ++m_connectFailures;
        m_available.notify_one();
        throw;
      }
    }
    ++m_waiting;
    bool woke = m_available.wait_until(lock, deadline, [&] { return !m_idle.empty() || m_open < m_maxSize; });
    --m_waiting;
    if (!woke) throw pg::Unavailable("all " + std::to_string(m_maxSize) + " store connections are busy");
  }
}

void Pool::giveBack(std::unique_ptr<pg::Connection> conn, bool broken) {
  std::unique_ptr<pg::Connection> closing;  // closed outside the lock
  {
    std::lock_guard lock(m_mutex);
    if (broken) {
      closing = std::move(conn);
      --m_open;
    } else {
      m_idle.push_back(std::move(conn));
    }
  }
  m_available.notify_one();
}

void Pool::dropIdle() {
  std::vector<std::unique_ptr<pg::Connection>> closing;
  {
    std::lock_guard lock(m_mutex);
    closing.swap(m_idle);
    m_open -= static_cast<int>(closing.size());
  }
  m_available.notify_all();
}

Pool::Stats Pool::stats() const {
  std::lock_guard lock(m_mutex);
  Stats s;
  s.size = m_open;
  s.idle = static_cast<int>(m_idle.size());
  s.inUse = m_open - s.idle;
  s.waiting = m_waiting;
  s.maxSize = m_maxSize;
  s.connectFailures = m_connectFailures;
  return s;
}

}  // namespace idem::store
