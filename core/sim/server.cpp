// Server model.
#include "core/sim/server.h"

#include <algorithm>
#include <cmath>

namespace idem::sim {

namespace {
// z such that P(Z <= z) = 0.99 for a standard normal.
constexpr double kZ99 = 2.3263478740408408;

bool active(const ServerEvent& e, Usec t) { return t >= e.at && t < e.at + e.duration; }
}  // namespace

LatencyModel::LatencyModel(Usec median, Usec p99) {
  const double m = std::max<double>(1.0, static_cast<double>(median));
  const double q = std::max<double>(m, static_cast<double>(p99));
  m_mu = std::log(m);
  m_sigma = std::log(q / m) / kZ99;
}

Usec LatencyModel::sample(Rng& rng) const {
  if (m_sigma == 0) return static_cast<Usec>(std::llround(std::exp(m_mu)));
  const double v = std::exp(m_mu + m_sigma * rng.normal());
  // A day bounds the far tail so an extreme draw cannot overflow the clock.
  return static_cast<Usec>(std::llround(std::min(v, 86400.0 * kUsecPerSecond)));
}

ServerModel::ServerModel(const Server& s) : m_s(s), m_latency(s.latencyMedian, s.latencyP99) {
  for (const auto& e : m_s.events) {
    if (e.outage) m_outages.push_back(&e);
    if (e.failureRate) m_failureWindows.push_back(&e);
    if (e.retryAfter) m_retryAfterWindows.push_back(&e);
  }
  if (m_s.capacityRps > 0) m_slot = static_cast<double>(kUsecPerSecond) / m_s.capacityRps;
}

const ServerEvent* ServerModel::outageAt(Usec t) const {
  for (const auto* e : m_outages)
    if (active(*e, t)) return e;
  return nullptr;
}

double ServerModel::failureRateAt(Usec t) const {
  for (const auto* e : m_failureWindows)
    if (active(*e, t)) return *e->failureRate;
  return m_s.failureRate;
}

Usec ServerModel::retryAfter503At(Usec t) const {
  for (const auto* e : m_retryAfterWindows)
    if (active(*e, t)) return *e->retryAfter;
  return m_s.retryAfter;
}

Usec ServerModel::admit(Usec t) {
  if (m_slot == 0) return t;
  const double start = std::max(static_cast<double>(t), m_busyUntil);
  m_busyUntil = start + m_slot;
  return std::max(t, static_cast<Usec>(std::llround(start)));
}

Usec ServerModel::queueWait(Usec t) const {
  if (m_slot == 0) return 0;
  return std::max<Usec>(0, static_cast<Usec>(std::llround(m_busyUntil)) - t);
}

}  // namespace idem::sim
