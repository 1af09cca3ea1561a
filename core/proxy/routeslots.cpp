#include "core/proxy/routeslots.h"

namespace idem::proxy {

bool RouteSlots::take(const std::string& route) {
  std::lock_guard lock(m_mutex);
  std::size_t& n = m_inFlight[route];
  if (m_perRoute > 0 && n >= m_perRoute) {
    if (n == 0) m_inFlight.erase(route);
    return false;
  }
  ++n;
  return true;
}

void RouteSlots::give(const std::string& route) {
  std::lock_guard lock(m_mutex);
  const auto it = m_inFlight.find(route);
  if (it == m_inFlight.end()) return;
  if (--it->second == 0) m_inFlight.erase(it);
}

}  // namespace idem::proxy
