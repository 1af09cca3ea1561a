#include "core/enforce/conflictwaits.h"

namespace idem::enforce {

void ConflictWaits::setBounds(ConflictWaitBounds bounds) {
  const std::lock_guard lock(m_mutex);
  m_bounds = bounds;
}

std::optional<ConflictWaits::Slot> ConflictWaits::enter(const std::string& id) {
  const std::lock_guard lock(m_mutex);
  int& ofKey = m_perKey[id];
  if (ofKey >= m_bounds.perKey || m_total >= m_bounds.total) {
    if (ofKey == 0) m_perKey.erase(id);
    ++m_refused;
    return std::nullopt;
  }
  ++ofKey;
  ++m_total;
  return std::optional<Slot>(std::in_place, *this, id);
}

void ConflictWaits::leave(const std::string& id) {
  const std::lock_guard lock(m_mutex);
  --m_total;
  const auto at = m_perKey.find(id);
  if (at != m_perKey.end() && --at->second <= 0) m_perKey.erase(at);
}

int ConflictWaits::waiting() const {
  const std::lock_guard lock(m_mutex);
  return m_total;
}

long long ConflictWaits::refused() const {
  const std::lock_guard lock(m_mutex);
  return m_refused;
}

}  // namespace idem::enforce
