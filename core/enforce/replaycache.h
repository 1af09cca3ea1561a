#pragma once
// Replays answered from memory (docs/design.md §9). A done key's stored answer cannot change
// before the key expires, so once the store has replayed it, this process may replay it again
// without a round trip — within two bounds:
//  - never at or after the key's expiry by the database's clock: the entry's deadline is the
//    remaining life the store reported (expires_at - now() at the read), counted on this host's
//    steady clock from *before* the read was sent, minus a safety margin;
//  - never longer than `maxAge` after that read: an operator who deletes a key (or anything else
//    that changes a done key before it expires) is obeyed within maxAge by every process.
// A different payload is no hit (the fingerprint is kept: the store then answers 422), scopes
// (tenant, endpoint, key) never share an entry, and memory is bounded by entry count and bytes
// (least recently used first). Thread-safe.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/store/keystore.h"

namespace idem::enforce {

struct ReplayCacheOptions {
  /// How long an entry may answer without the store: the bound on how late an operator's purge
  /// of a done key takes effect. Zero: no cache (every replay reads the store).
  std::chrono::milliseconds maxAge{0};
  /// Kept between the entry's deadline and the key's expiry by the database's clock.
  std::chrono::milliseconds expiryMargin{250};
  std::size_t maxEntries = 10'000;
  std::size_t maxBytes = 32u << 20;  // stored bodies and headers; one entry above 1/16 of it is not kept
};

class ReplayCache {
 public:
  using Clock = std::chrono::steady_clock;

  struct Hit {
    std::shared_ptr<const store::StoredResponse> response;
    int generation = 0;
    store::DbTime expiresAt = 0;
    /// The database's clock now, as estimated from the read (never behind it by more than the
    /// read's round trip): the trace row's time.
    store::DbTime dbNow = 0;
  };
  struct Stats {
    long long hits = 0;
    long long misses = 0;     // looked up, not answered here (absent, stale, another payload)
    long long evictions = 0;  // dropped to stay within maxEntries / maxBytes
    long long expired = 0;    // dropped because maxAge or the key's expiry came
    std::size_t entries = 0;
    std::size_t bytes = 0;
  };

  explicit ReplayCache(ReplayCacheOptions options = {});
  ReplayCache(const ReplayCache&) = delete;
  ReplayCache& operator=(const ReplayCache&) = delete;

  [[nodiscard]] bool enabled() const { return m_options.maxAge.count() > 0; }
  [[nodiscard]] const ReplayCacheOptions& options() const { return m_options; }

  /// The stored answer for this scope when it may still be served and the payload is the same.
  [[nodiscard]] std::optional<Hit> find(const store::Scope& scope, const std::string& fingerprint);
  /// Whether an entry for this scope is kept (fresh or not, any payload); counts nothing.
  [[nodiscard]] bool holds(const store::Scope& scope) const;
  /// Keeps the store's replay. `sentAt`: taken before the read that returned `replay` was sent.
  void put(const store::Scope& scope, const std::string& fingerprint, const store::ClaimResult& replay,
           Clock::time_point sentAt);
  /// Forgets the scope (this process is about to run its key again).
  void erase(const store::Scope& scope);
  [[nodiscard]] Stats stats() const;
  /// A scope as one string: the cache's key (and the conflict waiters').
  [[nodiscard]] static std::string idOf(const store::Scope& scope);

 private:
  struct Entry {
    std::string id;
    std::string fingerprint;
    std::shared_ptr<const store::StoredResponse> response;
    int generation = 0;
    store::DbTime expiresAt = 0;
    store::DbTime dbNowAtRead = 0;
    Clock::time_point sentAt;
    Clock::time_point deadline;
    std::size_t bytes = 0;
  };
  using Lru = std::list<Entry>;  // most recently used first
  /// One lock per shard, so threads replaying different keys rarely meet.
  struct Shard {
    std::mutex mutex;
    Lru lru;
    std::unordered_map<std::string, Lru::iterator> index;
    std::size_t bytes = 0;
  };
  static constexpr std::size_t kShards = 16;
  Shard& shardOf(const std::string& id) const;
  void drop(Shard& shard, Lru::iterator it);

  ReplayCacheOptions m_options;
  mutable std::vector<Shard> m_shards;  // stats() locks them too
  std::atomic<long long> m_hits{0};
  std::atomic<long long> m_misses{0};
  std::atomic<long long> m_evictions{0};
  std::atomic<long long> m_expired{0};
};

}  // namespace idem::enforce
