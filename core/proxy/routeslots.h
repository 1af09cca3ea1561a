#pragma once
// Per-route bound on exchanges with the upstream in flight (late-answer waits included), so one
// slow route cannot take every upstream connection from the others. A route is its tier on a
// policy route (a tier's routes share one bound) and its path elsewhere; entries exist only while
// something is in flight, so the map is bounded by the connection bound. Thread-safe.
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace idem::proxy {

class RouteSlots {
 public:
  explicit RouteSlots(std::size_t perRoute) : m_perRoute(perRoute) {}
  /// false: `route` already has perRoute exchanges in flight (0: no bound).
  bool take(const std::string& route);
  void give(const std::string& route);
  [[nodiscard]] std::size_t perRoute() const { return m_perRoute; }

 private:
  std::size_t m_perRoute;
  std::mutex m_mutex;
  std::unordered_map<std::string, std::size_t> m_inFlight;
};

}  // namespace idem::proxy
