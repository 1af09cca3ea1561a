#include "core/store/pool.h"

#include <algorithm>
#include <iterator>

namespace idem::store {

Pool::Pool(std::string conninfo, int maxSize, std::chrono::milliseconds acquireTimeout)
    : m_conninfo(std::move(conninfo)), m_maxSize(maxSize < 1 ? 1 : maxSize), m_acquireTimeout(acquireTimeout) {}

Pool::~Pool() {
  std::lock_guard lock(m_mutex);
  m_idle.clear();
}

Pool::Lease::~Lease() {
  if (!m_conn) return;
  // Health is read before the move: arguments are evaluated in no fixed order, and clang moves
  // m_conn out first (then reads a null connection).
  const bool broken = m_broken || !m_conn->healthy() || m_conn->retiring();
  m_pool->giveBack(std::move(m_conn), broken);
}

namespace {
// The connection this thread used last. Handing it back to the same thread keeps each server
// backend talking to one client thread, which the kernel then schedules side by side instead
// of waking a different thread on another CPU each time. Only compared, never dereferenced.
thread_local const pg::Connection* t_lastConnection = nullptr;
}  // namespace

Pool::Lease Pool::acquire() {
  std::unique_lock lock(m_mutex);
  const auto deadline = std::chrono::steady_clock::now() + m_acquireTimeout;
  for (;;) {
    if (!m_idle.empty()) {
      auto mine = std::find_if(m_idle.begin(), m_idle.end(),
                               [](const auto& c) { return c.get() == t_lastConnection; });
      if (mine == m_idle.end()) mine = std::prev(m_idle.end());
      auto conn = std::move(*mine);
      m_idle.erase(mine);
      if (!m_preparedStatements) conn->setPreparedStatements(false);
      t_lastConnection = conn.get();
      return Lease(this, std::move(conn), true);
    }
    if (m_open < m_maxSize) {
      ++m_open;
      const bool prepared = m_preparedStatements;
      lock.unlock();  // connecting takes a round trip or a timeout: never under the lock
      auto conn = connectReserved(prepared);
      t_lastConnection = conn.get();
      return Lease(this, std::move(conn), false);
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
    // A connection that met a pooler in transaction mode switched itself: the others follow.
    if (!conn->preparedStatements()) m_preparedStatements = false;
    if (broken) {
      closing = std::move(conn);
      --m_open;
    } else {
      m_idle.push_back(std::move(conn));
    }
  }
  m_available.notify_one();
}

std::unique_ptr<pg::Connection> Pool::connectReserved(bool prepared) {
  try {
    auto conn = std::make_unique<pg::Connection>(m_conninfo);
    conn->setPreparedStatements(prepared);
    return conn;
  } catch (...) {
    {
      std::lock_guard lock(m_mutex);
      --m_open;
      ++m_connectFailures;
    }
    m_available.notify_one();
    throw;
  }
}

int Pool::warmUp(int count, const std::stop_token& stop) {
  int opened = 0;
  while (!stop.stop_requested()) {
    bool prepared = true;
    {
      std::lock_guard lock(m_mutex);
      if (m_open >= std::min(count, m_maxSize)) break;
      ++m_open;
      prepared = m_preparedStatements;
    }
    std::unique_ptr<pg::Connection> conn;
    try {
      conn = connectReserved(prepared);
    } catch (const std::exception&) {
      break;  // the store is away: requests connect (and report) by themselves
    }
    giveBack(std::move(conn), false);
    ++opened;
  }
  return opened;
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
  s.preparedStatements = m_preparedStatements;
  return s;
}

void Pool::setPreparedStatements(bool on) {
  std::lock_guard lock(m_mutex);
  m_preparedStatements = on;
  for (auto& conn : m_idle) conn->setPreparedStatements(on);
}

}  // namespace idem::store
