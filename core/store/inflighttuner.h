#pragma once
// How many write batches a lane keeps in flight, found by watching the lane's own keys/s.
//
// Why it adapts: a commit waits for its WAL flush. When the flush is slow (a disk, a
// synchronous standby) every statement in flight rides the same flush, so more in flight carry
// more keys a flush; when the flush is quick and the CPU is the limit, fewer in flight make
// bigger batches and less work per key. Measured (tests/bench/RESULTS.md): on a 4 ms flush eight
// beat one or two by 30-50 %; on a 0.2 ms flush two beat eight by ~20 % at 16-64 clients.
// Latency cannot tell the two apart (group commit spreads a commit's wait from nothing to a whole
// flush), so the tuner compares throughput.
//
// Perturb and observe: an epoch at the limit in force, an epoch at a neighbour on the ladder
// (powers of two from min to max; the neighbour below and above in turn), and one more at the
// limit in force; the limit moves when the neighbour did better than the two around it. Too few in flight costs more than too many (30-50 % against
// ~20 %), so going down takes two wins in a row and going up one; ties go up, since when the
// load is one the lane carries either way (traffic below capacity, where keys/s is the arrival
// rate) more in flight means less queueing. A probe that lost waits a few epochs more before
// the next: at its best count a lane spends little time away from it.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <vector>

namespace idem::store {

class InFlightTuner {
 public:
  using Clock = std::chrono::steady_clock;

  struct Settings {
    std::size_t min = 1;
    std::size_t max = 8;
    std::size_t start = 8;  // rounded down to the ladder
    /// An epoch closes at the first batch ending after this long, once it has seen enough batches.
    Clock::duration epoch = std::chrono::milliseconds(100);
    std::size_t epochBatches = 8;
    std::size_t epochKeys = 128;
    /// A smaller limit must beat the larger by this share; a larger one may lose by this much.
    double downGain = 0.05;
    double upLoss = 0.02;
  };

  explicit InFlightTuner(const Settings& s);
  /// A limit that never moves.
  [[nodiscard]] static InFlightTuner fixed(std::size_t inFlight);

  /// Batches the lane may have in flight now: the settled limit, or a neighbour being tried.
  [[nodiscard]] std::size_t limit() const { return m_ladder[m_phase == Phase::Probe ? m_probe : m_settled]; }
  /// The limit the last comparison settled on.
  [[nodiscard]] std::size_t settled() const { return m_ladder[m_settled]; }
  [[nodiscard]] bool adapts() const { return m_ladder.size() > 1; }

  /// A batch of `keys` ended at `now`; may change limit(). Not thread-safe (InFlightLimit is).
  void batchEnded(std::size_t keys, Clock::time_point now);

 private:
  void closeEpoch(double keysPerSecond);
  void judge(double baseline);
  void startEpoch(Clock::time_point now);

  /// An epoch at the settled limit, one at the probe's, then one at the settled limit again.
  enum class Phase { Settled, Probe, Verdict };

  Settings m_settings;
  std::vector<std::size_t> m_ladder;  // the limits it may take, ascending
  std::size_t m_settled = 0;          // index into m_ladder
  std::size_t m_probe = 0;
  Phase m_phase = Phase::Settled;
  bool m_warmingUp = true;      // the first epoch is not compared
  bool m_probeDownNext = true;  // which neighbour the next probe tries
  int m_downWins = 0;           // probes below that won in a row
  int m_restEpochs = 0;         // settled epochs to wait before the next probe
  int m_rest = 0;               // how long the wait after a lost probe is now
  double m_settledRate = 0;     // keys/s of the settled limit's last epoch
  double m_probeRate = 0;       // of the probe's
  Clock::time_point m_epochStart{};
  bool m_started = false;
  std::size_t m_epochKeys = 0;
  std::size_t m_epochBatches = 0;
};

/// One tuner shared by the lanes of a process (claims and completions: in a steady state both
/// carry every key, so they see the same keys/s and one count serves both without one lane's
/// probe reading as the other's noise). Safe for any thread; limit() is a plain load.
class InFlightLimit {
 public:
  explicit InFlightLimit(const InFlightTuner& tuner) : m_tuner(tuner), m_limit(tuner.limit()) {}
  [[nodiscard]] std::size_t limit() const { return m_limit.load(std::memory_order_relaxed); }
  void batchEnded(std::size_t keys) {
    if (!m_tuner.adapts()) return;
    std::lock_guard lock(m_mutex);
    m_tuner.batchEnded(keys, InFlightTuner::Clock::now());
    m_limit.store(m_tuner.limit(), std::memory_order_relaxed);
  }

 private:
  std::mutex m_mutex;
  InFlightTuner m_tuner;
  std::atomic<std::size_t> m_limit;
};

}  // namespace idem::store
