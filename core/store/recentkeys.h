#pragma once
// Which keys this process decided recently: a fixed table of 64-bit hashes, one per slot, a
// newer key overwriting an older one in its slot. It only chooses the order of the claim's
// statements (a key seen here is probably a retry: read it first; a key not seen here is
// probably new: try to claim it first). Both orders reach the same decision, so a stale or
// colliding entry costs a round trip, never correctness. Lock-free: a racy slot is just a miss.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

namespace idem::store {

class RecentKeys {
 public:
  /// `slots` is rounded up to a power of two; 8 bytes each. 0: remembers nothing (every key
  /// looks new: the order a process that never saw the key would use).
  explicit RecentKeys(std::size_t slots = std::size_t{1} << 20);
  /// The process's table (8 MB, about the last million keys): a retry that reaches this
  /// process finds the key its first request left here, whichever KeyStore decided it.
  static RecentKeys& shared();

  /// A key's hash, computed once per claim for the lookup and the update.
  [[nodiscard]] static std::uint64_t tag(std::string_view tenant, std::string_view endpoint, std::string_view key);
  [[nodiscard]] bool contains(std::uint64_t tag) const;
  void remember(std::uint64_t tag);
  [[nodiscard]] bool contains(std::string_view tenant, std::string_view endpoint, std::string_view key) const {
    return contains(tag(tenant, endpoint, key));
  }
  void remember(std::string_view tenant, std::string_view endpoint, std::string_view key) {
    remember(tag(tenant, endpoint, key));
  }

 private:

  std::size_t m_mask;
  std::unique_ptr<std::atomic<std::uint64_t>[]> m_slots;
};

}  // namespace idem::store
