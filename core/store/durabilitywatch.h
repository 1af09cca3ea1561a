#pragma once
// The store's durability as last read, re-read at most every `maxAge` by whichever caller
// comes first (a request of a tier that needs synchronous durability, /healthz, /metrics):
// replication settings change at a reload or a failover, not per request.
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>

#include "core/store/durability.h"
#include "core/store/pool.h"

namespace idem::store {

class DurabilityWatch {
 public:
  explicit DurabilityWatch(Pool& pool, std::chrono::milliseconds maxAge = std::chrono::seconds(2))
      : m_pool(pool), m_maxAge(maxAge) {}

  /// The latest reading, read again first when older than maxAge. While another caller reads,
  /// the previous reading. nullopt: never read (the store was unreachable every time).
  [[nodiscard]] std::optional<Durability> current();
  /// Reads now (the store's errors propagate: /healthz reports them).
  Durability refresh();

 private:
  Pool& m_pool;
  std::chrono::milliseconds m_maxAge;
  std::mutex m_mutex;
  std::optional<Durability> m_last;
  std::chrono::steady_clock::time_point m_readAt;
  std::atomic<bool> m_reading{false};
};

}  // namespace idem::store
