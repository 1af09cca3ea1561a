#include "core/store/replaybodies.h"

#include <algorithm>

namespace idem::store {

ReplayBodies::ReplayBodies(ReplayBodyOptions options) : m_options(options) {}

ReplayBodies::Hold ReplayBodies::take(std::size_t bytes, bool large) {
  // Large bodies leave a quarter of the budget to small answers: a storm of big replays cannot
  // refuse every other tenant's small one.
  const std::size_t limit = large ? m_options.maxBytes / 4 * 3 : m_options.maxBytes;
  std::size_t used = m_bytes->load(std::memory_order_relaxed);
  do {
    // A body larger than the limit still goes alone when nothing else is held: a stored answer
    // is never made unreplayable by the budget, only made to wait its turn.
    const bool alone = used == 0;
    if (!alone && (bytes > limit || used > limit - bytes)) {
      ++m_refused;
      return nullptr;
    }
  } while (!m_bytes->compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  if (large) ++m_largeBodies;
  // The pointer is never read: its deleter gives the bytes back when the last copy goes.
  static const char token = 0;
  return Hold(&token, [held = m_bytes, bytes](const void*) { held->fetch_sub(bytes, std::memory_order_relaxed); });
}

ReplayBodies::ReadSlot::ReadSlot(ReplayBodies& owner) : m_owner(owner) {
  std::unique_lock lock(owner.m_mutex);
  const int slots = std::max(1, owner.m_options.maxLargeReads);
  const auto oneFree = [&] { return owner.m_largeReads < slots; };
  // Each waiter holds a handler thread: at most kWaitersPerSlot per slot wait, the rest are refused.
  if (oneFree()) {
    m_held = true;
  } else if (owner.m_waiting < slots * kWaitersPerSlot) {
    ++owner.m_waiting;
    m_held = owner.m_slotFree.wait_for(lock, owner.m_options.slotWait, oneFree);
    --owner.m_waiting;
  }
  if (m_held)
    ++owner.m_largeReads;
  else
    ++owner.m_refused;
}

ReplayBodies::ReadSlot::~ReadSlot() {
  if (!m_held) return;
  {
    std::lock_guard lock(m_owner.m_mutex);
    --m_owner.m_largeReads;
  }
  m_owner.m_slotFree.notify_one();
}

ReplayBodies::Stats ReplayBodies::stats() const {
  Stats s;
  s.bytes = m_bytes->load();
  s.maxBytes = m_options.maxBytes;
  s.maxLargeReads = std::max(1, m_options.maxLargeReads);
  s.refused = m_refused.load();
  s.largeBodies = m_largeBodies.load();
  std::lock_guard lock(m_mutex);
  s.largeReads = m_largeReads;
  s.waiting = m_waiting;
  return s;
}

}  // namespace idem::store
