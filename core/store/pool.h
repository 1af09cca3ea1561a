#pragma once
// A connection pool safe for many threads. A connection found broken makes the pool drop its
// idle connections too (after a server restart they are all dead), so the next request
// reconnects instead of failing on each stale connection in turn.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "core/store/pg.h"

namespace idem::store {

class Pool {
 public:
  Pool(std::string conninfo, int maxSize, std::chrono::milliseconds acquireTimeout = std::chrono::seconds(5));
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool();

  /// Exclusive use of one connection; returned to the pool when destroyed.
  class Lease {
   public:
    Lease(Pool* pool, std::unique_ptr<pg::Connection> conn, bool reused)
        : m_pool(pool), m_conn(std::move(conn)), m_reused(reused) {}
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();
    [[nodiscard]] pg::Connection& conn() { return *m_conn; }
    /// True when the connection had served earlier requests (it may have gone stale).
    [[nodiscard]] bool reused() const { return m_reused; }
    /// Marks the connection broken: it is closed instead of returned.
    void discard() { m_broken = true; }

   private:
    Pool* m_pool;
    std::unique_ptr<pg::Connection> m_conn;
    bool m_reused;
    bool m_broken = false;
  };

  /// Waits for a free connection (up to the acquire timeout) or opens one. Throws
  /// pg::Unavailable when the server cannot be reached or the pool stays exhausted.
  [[nodiscard]] Lease acquire();

  /// Runs fn(connection); when a reused connection turns out dead, retries once on a fresh
  /// one. Only for statements that are safe to send twice.
  template <typename Fn>
  auto withRetry(Fn&& fn) {
    for (int attempt = 0;; ++attempt) {
      Lease lease = acquire();
      try {
        return fn(lease.conn());
      } catch (const pg::Unavailable&) {
        lease.discard();
        dropIdle();
        if (attempt > 0 || !lease.reused()) throw;
      }
    }
  }

  struct Stats {
    int size = 0;     // open connections
    int idle = 0;
    int inUse = 0;
    int waiting = 0;  // threads waiting for a connection
    int maxSize = 0;
    long long connectFailures = 0;
    bool preparedStatements = true;  // false: unnamed statements (a pooler in transaction mode)
  };
  [[nodiscard]] Stats stats() const;
  [[nodiscard]] const std::string& conninfo() const { return m_conninfo; }

  /// Opens connections one at a time until `count` (at most the pool's size) are open, so
  /// that the first burst of requests after a start finds them ready instead of all
  /// connecting at once (on a busy 2-core host sixteen simultaneous backend starts held the
  /// first requests 1-2 s). Stops at the first failure or when `stop` is requested. Returns
  /// how many it opened.
  int warmUp(int count, const std::stop_token& stop = {});

  /// Closes every idle connection (they are likely dead after a connection loss).
  void dropIdle();

  /// false: every connection sends unnamed statements — for a pooler in transaction mode
  /// that does not keep prepared statements (PgBouncer before 1.21). Without it the pool
  /// finds out by itself: once one connection meets such a pooler, all of them switch.
  void setPreparedStatements(bool on);

 private:
  void giveBack(std::unique_ptr<pg::Connection> conn, bool broken);
  /// Opens a connection for a slot the caller already counted in m_open (without the lock);
  /// on failure gives the slot back, counts the failure and rethrows.
  std::unique_ptr<pg::Connection> connectReserved(bool prepared);

  std::string m_conninfo;
  int m_maxSize;
  std::chrono::milliseconds m_acquireTimeout;
  mutable std::mutex m_mutex;
  std::condition_variable m_available;
  std::vector<std::unique_ptr<pg::Connection>> m_idle;
  int m_open = 0;
  int m_waiting = 0;
  long long m_connectFailures = 0;
  bool m_preparedStatements = true;
};

}  // namespace idem::store
