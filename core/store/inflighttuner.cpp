#include "core/store/inflighttuner.h"

#include <algorithm>

namespace idem::store {

InFlightTuner::InFlightTuner(const Settings& s) : m_settings(s) {
  const std::size_t lo = std::max<std::size_t>(1, s.min);
  const std::size_t hi = std::max(lo, s.max);
  for (std::size_t n = lo; n < hi; n *= 2) m_ladder.push_back(n);
  m_ladder.push_back(hi);
  m_settled = 0;
  while (m_settled + 1 < m_ladder.size() && m_ladder[m_settled + 1] <= s.start) ++m_settled;
}

InFlightTuner InFlightTuner::fixed(std::size_t inFlight) {
  Settings s;
  s.min = s.max = s.start = std::max<std::size_t>(1, inFlight);
  return InFlightTuner(s);
}

void InFlightTuner::startEpoch(Clock::time_point now) {
  m_epochStart = now;
  m_started = true;
  m_epochKeys = 0;
  m_epochBatches = 0;
}

void InFlightTuner::batchEnded(std::size_t keys, Clock::time_point now) {
  if (!adapts()) return;
  if (!m_started) {
    startEpoch(now);
    return;
  }
  m_epochKeys += keys;
  ++m_epochBatches;
  const auto elapsed = now - m_epochStart;
  if (elapsed < m_settings.epoch) return;
  if (m_epochBatches < m_settings.epochBatches || m_epochKeys < m_settings.epochKeys) {
    // Too little traffic to compare anything: the limit does not bind. Once the epoch is long
    // past due, give up a probe under way and start over at the settled limit.
    if (elapsed >= 10 * m_settings.epoch) {
      m_phase = Phase::Settled;
      m_downWins = 0;
      startEpoch(now);
    }
    return;
  }
  const double seconds = std::chrono::duration<double>(elapsed).count();
  closeEpoch(static_cast<double>(m_epochKeys) / seconds);
  startEpoch(now);
}

void InFlightTuner::closeEpoch(double keysPerSecond) {
  if (m_warmingUp) {
    m_warmingUp = false;  // connections opening, caches filling: compares with nothing
    return;
  }
  switch (m_phase) {
    case Phase::Settled: {
      m_settledRate = keysPerSecond;
      if (m_restEpochs > 0) {
        --m_restEpochs;
        return;
      }
      const bool hasBelow = m_settled > 0;
      const bool hasAbove = m_settled + 1 < m_ladder.size();
      const bool down = (m_probeDownNext && hasBelow) || !hasAbove;
      m_probe = down ? m_settled - 1 : m_settled + 1;
      m_phase = Phase::Probe;
      return;
    }
    case Phase::Probe:
      m_probeRate = keysPerSecond;
      m_phase = Phase::Verdict;  // back at the settled limit, to measure it after the probe too
      return;
    case Phase::Verdict: {
      // The probe against the settled limit's epochs before and after it: a host whose speed
      // drifts (another process, a checkpoint) moves both sides alike.
      const double baseline = (m_settledRate + keysPerSecond) / 2;
      m_settledRate = keysPerSecond;
      m_phase = Phase::Settled;
      judge(baseline);
      return;
    }
  }
}

void InFlightTuner::judge(double baseline) {
  const bool down = m_probe < m_settled;
  const bool won = down ? m_probeRate > baseline * (1 + m_settings.downGain)
                        : m_probeRate >= baseline * (1 - m_settings.upLoss);
  if (!won) {
    // Try the other side next, after a rest that grows while probes keep losing.
    m_downWins = 0;
    m_probeDownNext = !down;
    m_rest = m_rest == 0 ? 1 : std::min(2 * m_rest, 4);
    m_restEpochs = m_rest;
    return;
  }
  if (down && ++m_downWins < 2) {
    m_probeDownNext = true;  // once more, from fresh measurements
    return;
  }
  m_settled = m_probe;
  m_settledRate = m_probeRate;
  m_downWins = 0;
  m_rest = 0;
  m_restEpochs = 0;
  // Next, a step up: on from a move up; after a move down, a check that it was not the noise.
  m_probeDownNext = false;
}

}  // namespace idem::store
