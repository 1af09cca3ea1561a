#include "core/enforce/leasekeeper.h"

#include <algorithm>
#include <vector>

namespace idem::enforce {
namespace {

// A lease is renewed when a third of it has passed: two renewals may fail (a slow or briefly
// unreachable store) before it runs out.
std::chrono::milliseconds renewEvery(std::chrono::milliseconds lease) {
  return std::max(lease / 3, std::chrono::milliseconds(10));
}

}  // namespace

LeaseKeeper::~LeaseKeeper() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void LeaseKeeper::hold(const store::Scope& scope, const std::string& token, std::chrono::milliseconds lease) {
  bool wake = false;
  {
    std::lock_guard lock(m_mutex);
    const auto due = Clock::now() + renewEvery(lease);
    m_held[token] = Held{{scope, token, lease}, due};
    if (!m_thread.joinable()) m_thread = std::thread([this] { run(); });
    // Woken only when this lease falls due before the keeper would wake anyway: not once per
    // request (a thread switch each, on the new-key path), only when idle or for a shorter lease.
    wake = due < m_sleepsUntil;
  }
  if (wake) m_wake.notify_all();
}

void LeaseKeeper::drop(const std::string& token) {
  std::lock_guard lock(m_mutex);
  m_held.erase(token);
}

void LeaseKeeper::setPaused(bool paused) {
  {
    std::lock_guard lock(m_mutex);
    m_paused = paused;
  }
  m_wake.notify_all();
}

long long LeaseKeeper::renewals() const {
  std::lock_guard lock(m_mutex);
  return m_renewals;
}

long long LeaseKeeper::wakeUps() const {
  std::lock_guard lock(m_mutex);
  return m_wakeUps;
}

long long LeaseKeeper::failures() const {
  std::lock_guard lock(m_mutex);
  return m_failures;
}

void LeaseKeeper::run() {
  std::unique_lock lock(m_mutex);
  while (!m_stopping) {
    auto next = Clock::time_point::max();
    for (const auto& [token, held] : m_held) next = std::min(next, held.due);
    if (next == Clock::time_point::max() || m_paused) {
      m_sleepsUntil = Clock::time_point::max();
      m_wake.wait(lock, [&] { return m_stopping || (!m_held.empty() && !m_paused); });
      m_sleepsUntil = Clock::time_point::min();  // awake: it looks at every lease before sleeping
      ++m_wakeUps;
      continue;
    }
    if (Clock::now() < next) {
      m_sleepsUntil = next;
      m_wake.wait_until(lock, next);
      m_sleepsUntil = Clock::time_point::min();
      ++m_wakeUps;
      continue;
    }
    // Everything due within the next few milliseconds goes in the same statement.
    const auto horizon = Clock::now() + std::chrono::milliseconds(20);
    std::vector<store::LeaseHold> due;
    for (const auto& [token, held] : m_held)
      if (held.due <= horizon) due.push_back(held.lease);
    lock.unlock();
    // The statement runs without the lock: hold() and drop() of other requests never wait on
    // the database.
    std::vector<std::string> renewed;
    bool failed = false;
    try {
      renewed = m_store.renewLeases(due);
    } catch (const std::exception&) {
      failed = true;
    }
    lock.lock();
    const auto now = Clock::now();
    if (failed) {
      ++m_failures;
      // Try again soon; the lease still has two thirds of its length.
      for (const auto& d : due)
        if (auto it = m_held.find(d.token); it != m_held.end())
          it->second.due = now + std::max(renewEvery(d.lease) / 4, std::chrono::milliseconds(10));
      continue;
    }
    for (const auto& d : due) {
      auto it = m_held.find(d.token);
      if (it == m_held.end()) continue;  // dropped meanwhile
      if (std::find(renewed.begin(), renewed.end(), d.token) == renewed.end()) {
        m_held.erase(it);  // completed, released or taken over: nothing left to keep
        continue;
      }
      ++m_renewals;
      it->second.due = now + renewEvery(d.lease);
    }
  }
}

}  // namespace idem::enforce
