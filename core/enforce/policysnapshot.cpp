#include "core/enforce/policysnapshot.h"

namespace idem::enforce {
namespace {

// Stamps are unique in the process, so a thread's cached snapshot can never be mistaken for
// another PolicyInForce's (one destroyed and another made at its address).
std::uint64_t nextStamp() {
  static std::atomic<std::uint64_t> last{0};
  return ++last;
}

struct Taken {
  std::uint64_t stamp = 0;  // 0: none yet (stamps start at 1)
  PolicyPtr policy;
};
thread_local Taken t_taken;

}  // namespace

PolicyInForce::PolicyInForce(PolicyPtr first) : m_current(std::move(first)), m_stamp(nextStamp()) {}

PolicyPtr PolicyInForce::current() const {
  if (t_taken.stamp == m_stamp.load(std::memory_order_acquire)) return t_taken.policy;
  const std::lock_guard lock(m_mutex);
  t_taken = {m_stamp.load(std::memory_order_relaxed), m_current};
  return t_taken.policy;
}

void PolicyInForce::replace(PolicyPtr next) {
  {
    const std::lock_guard lock(m_mutex);
    m_current.swap(next);
    m_stamp.store(nextStamp(), std::memory_order_release);
  }
  // `next` now holds the old snapshot: released here, after the lock, unless requests still hold it.
}

}  // namespace idem::enforce
