#pragma once
// Which keys this process decided recently: a fixed table of 64-bit hashes, one per slot, a
// newer key overwriting an older one in its slot. It only chooses the order of the claim's
// statements (a key seen here is probably a retry: read it first; a key not seen here is
// probably new: try to claim it first, unless most recent such keys were retries). Both orders
// reach the same decision, so a stale or colliding entry, or a wrong lesson, costs a round trip,
// never correctness. Lock-free: a racy slot is just a miss, a racy window a blurred one.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/store/servicename.h"

namespace idem::store {

class RecentKeys {
 public:
  /// `slots` is rounded up to a power of two; 8 bytes each. 0: remembers nothing (every key
  /// looks new: the order a process that never saw the key would use).
  explicit RecentKeys(std::size_t slots = std::size_t{1} << 20);
  /// The process's table (8 MB, about the last million keys): a retry that reaches this
  /// process finds the key its first request left here, whichever KeyStore decided it.
  static RecentKeys& shared();

  /// A key's hash (its whole identity, the service included), computed once per claim for the
  /// lookup and the update. The service defaults to "default" (core/store/servicename.h).
  [[nodiscard]] static std::uint64_t tag(std::string_view tenant, std::string_view endpoint, std::string_view key,
                                         std::string_view service = kDefaultService);
  [[nodiscard]] bool contains(std::uint64_t tag) const;
  void remember(std::uint64_t tag);
  [[nodiscard]] bool contains(std::string_view tenant, std::string_view endpoint, std::string_view key,
                              std::string_view service = kDefaultService) const {
    return contains(tag(tenant, endpoint, key, service));
  }
  void remember(std::string_view tenant, std::string_view endpoint, std::string_view key,
                std::string_view service = kDefaultService) {
    remember(tag(tenant, endpoint, key, service));
  }

  /// Keys not seen here are usually new, but not after a restart or behind a load balancer:
  /// there a retry storm reaches processes that never saw its keys, and claiming first cost
  /// each of those replays a failed INSERT. So the order for such keys is learned from the
  /// last window of them: read first while most had a live row, claim first otherwise (the
  /// wrong order costs one statement either way, so the break-even is one half).
  static constexpr long long kUnseenWindow = 128;
  [[nodiscard]] bool readUnseenFirst() const { return m_readUnseenFirst.load(std::memory_order_relaxed); }
  /// What a claim of a key not seen here found: a live row (a retry, or a key in progress
  /// elsewhere) or none (a new key, or one with archived generations only).
  void learnUnseen(bool hadLiveRow);

 private:

  std::size_t m_mask;
  std::unique_ptr<std::atomic<std::uint64_t>[]> m_slots;
  std::atomic<long long> m_unseenClaims{0};
  std::atomic<long long> m_unseenLive{0};  // in the current window
  std::atomic<bool> m_readUnseenFirst{false};
};

}  // namespace idem::store
