#pragma once
// What the transport counts across connections: the request-body bytes buffered by all
// connections at once (one budget, so a thousand stalled bodies cannot grow the process past it),
// and its refusals and pauses, read by /metrics (metrics.h).
#include <atomic>
#include <cstddef>

namespace idem::server {

/// Request-body bytes held in memory by every connection of a server, under one limit.
class BodyBudget {
 public:
  explicit BodyBudget(std::size_t limit) : m_limit(limit) {}
  /// Takes n bytes if they fit; false (and nothing taken) when they do not.
  bool take(std::size_t n) {
    std::size_t used = m_used.load(std::memory_order_relaxed);
    do {
      if (n > m_limit || used > m_limit - n) return false;
    } while (!m_used.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
    return true;
  }
  void give(std::size_t n) { m_used.fetch_sub(n, std::memory_order_relaxed); }
  [[nodiscard]] std::size_t used() const { return m_used.load(std::memory_order_relaxed); }
  [[nodiscard]] std::size_t limit() const { return m_limit; }

 private:
  const std::size_t m_limit;
  std::atomic<std::size_t> m_used{0};
};

/// What one request holds of the budget; all of it goes back on release() or destruction.
class BodyReservation {
 public:
  explicit BodyReservation(BodyBudget* budget = nullptr) : m_budget(budget) {}
  BodyReservation(const BodyReservation&) = delete;
  BodyReservation& operator=(const BodyReservation&) = delete;
  ~BodyReservation() { release(); }
  /// Holds n more bytes; false when the budget has no room (what is held stays held).
  bool grow(std::size_t n) {
    if (!m_budget || n == 0) return true;
    if (!m_budget->take(n)) return false;
    m_held += n;
    return true;
  }
  void release() {
    if (m_budget && m_held) m_budget->give(m_held);
    m_held = 0;
  }

 private:
  BodyBudget* m_budget;
  std::size_t m_held = 0;
};

/// The transport's counters, kept by the server and rendered by Metrics::render.
struct TransportStats {
  const BodyBudget* bodyBudget = nullptr;
  std::atomic<long long> acceptPauses{0};          // accept() hit the descriptor limit: paused, then resumed
  std::atomic<long long> refusedServerFull{0};     // connections refused at --max-connections
  std::atomic<long long> refusedClientFull{0};     // refused at --max-connections-per-client
  std::atomic<long long> refusedBodyBudget{0};     // requests refused because their body did not fit the budget
  std::atomic<long long> loopExceptions{0};        // exceptions caught at the event loop (each closed one connection)
};

}  // namespace idem::server
