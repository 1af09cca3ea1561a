#include "core/store/recentkeys.h"

#include <bit>

namespace idem::store {
namespace {

// FNV-1a over the four parts, each followed by its length, so that ("ab", "c") and
// ("a", "bc") differ; then a final mix so that the low bits (the slot) depend on every byte.
std::uint64_t mixIn(std::uint64_t h, std::string_view part) {
  for (unsigned char c : part) h = (h ^ c) * 0x100000001b3ULL;
  const std::uint64_t n = part.size();
  return (h ^ n) * 0x100000001b3ULL;
}

}  // namespace

RecentKeys::RecentKeys(std::size_t slots)
    : m_mask(slots == 0 ? 0 : std::bit_ceil(slots) - 1),
      m_slots(slots == 0 ? nullptr : std::make_unique<std::atomic<std::uint64_t>[]>(m_mask + 1)) {}

RecentKeys& RecentKeys::shared() {
  static RecentKeys table;
  return table;
}

std::uint64_t RecentKeys::tag(std::string_view tenant, std::string_view endpoint, std::string_view key,
                              std::string_view service) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  h = mixIn(mixIn(mixIn(mixIn(h, tenant), endpoint), key), service);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h | 1;  // 0 marks an empty slot; the slot is chosen by the other bits
}

bool RecentKeys::contains(std::uint64_t t) const {
  return m_slots && m_slots[(t >> 1) & m_mask].load(std::memory_order_relaxed) == t;
}

void RecentKeys::remember(std::uint64_t t) {
  if (!m_slots) return;
  auto& slot = m_slots[(t >> 1) & m_mask];
  if (slot.load(std::memory_order_relaxed) != t) slot.store(t, std::memory_order_relaxed);
}

void RecentKeys::learnUnseen(bool hadLiveRow) {
  if (hadLiveRow) m_unseenLive.fetch_add(1, std::memory_order_relaxed);
  if ((m_unseenClaims.fetch_add(1, std::memory_order_relaxed) + 1) % kUnseenWindow != 0) return;
  const long long live = m_unseenLive.exchange(0, std::memory_order_relaxed);
  m_readUnseenFirst.store(2 * live > kUnseenWindow, std::memory_order_relaxed);
}

}  // namespace idem::store
