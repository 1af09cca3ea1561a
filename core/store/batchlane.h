#pragma once
// A lane where concurrent callers' jobs go to the store together. No timer: a caller that finds
// a free slot runs its own job at once (one client alone sees a single statement's latency);
// callers that arrive while every slot has a batch in flight queue, and when one ends the oldest
// of them runs everything queued as the next batch — on its own thread, so nobody hands work to a
// background thread and back. A few batches may be in flight at once: each commit waits for its
// WAL flush, and the server flushes concurrent commits together. How many is an InFlightLimit's
// call (inflighttuner.h): it follows the lanes' keys/s, or stays fixed.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "core/store/inflighttuner.h"

namespace idem::store {

template <typename Job>
class BatchLane {
 public:
  /// A batch holds at most `maxJobs`, and stops growing once its jobs' weight reaches
  /// `maxWeight` (e.g. response bytes); it always holds at least the job of its runner.
  /// `inFlight` (which may be shared with other lanes) says how many batches may be in flight.
  BatchLane(InFlightLimit& inFlight, std::size_t maxJobs, std::size_t maxWeight)
      : m_limit(inFlight), m_maxJobs(maxJobs), m_maxWeight(maxWeight) {}
  /// A lane with a fixed number of batches in flight.
  BatchLane(std::size_t maxInFlight, std::size_t maxJobs, std::size_t maxWeight)
      : m_ownLimit(std::make_unique<InFlightLimit>(InFlightTuner::fixed(maxInFlight))),
        m_limit(*m_ownLimit),
        m_maxJobs(maxJobs),
        m_maxWeight(maxWeight) {}

  /// Returns once `job` has been through a batch. `run(std::vector<Job*>&)` runs one batch and
  /// must settle every job in it without throwing (a job carries its own outcome or error).
  /// `weight(const Job&)` is its share of maxWeight.
  template <typename Run, typename Weight>
  void submit(Job& job, Run&& run, Weight&& weight) {
    Waiter me(&job);
    std::unique_lock lock(m_mutex);
    std::vector<Waiter*> batch;
    // Queued callers exist only while every slot is in flight: a new one queues behind them.
    if (m_inFlight >= m_limit.limit()) {
      m_queue.push_back(&me);
      me.wake.wait(lock, [&] { return me.done || me.leads; });
      if (me.done) return;
      // Promoted into the slot of a batch that ended, with the batch gathered for it there.
      batch = std::move(me.batch);
    } else {
      ++m_inFlight;
      batch.push_back(&me);
    }
    lock.unlock();
    std::vector<Job*> jobs;
    jobs.reserve(batch.size());
    for (auto* w : batch) jobs.push_back(w->job);
    run(jobs);
    m_limit.batchEnded(batch.size());
    lock.lock();
    for (auto* w : batch)
      if (w != &me) {
        w->done = true;
        w->wake.notify_one();
      }
    const std::size_t limit = m_limit.limit();
    // The slot goes to the oldest queued caller, unless the limit fell below what is in flight.
    if (m_queue.empty() || m_inFlight > limit)
      --m_inFlight;
    else
      promoteNext(weight);
    // A limit that rose lets more of the queue go at once.
    while (!m_queue.empty() && m_inFlight < limit) {
      ++m_inFlight;
      promoteNext(weight);
    }
  }

  /// Callers queued behind the batch in flight.
  [[nodiscard]] std::size_t waiting() const {
    std::lock_guard lock(m_mutex);
    return m_queue.size();
  }

  /// Batches running now, or whose next runner has been promoted and not yet started.
  [[nodiscard]] std::size_t inFlight() const {
    std::lock_guard lock(m_mutex);
    return m_inFlight;
  }

  /// Batches it may have in flight now.
  [[nodiscard]] std::size_t limit() const { return m_limit.limit(); }

 private:
  struct Waiter {
    explicit Waiter(Job* j) : job(j) {}
    Job* job;
    bool done = false;
    bool leads = false;
    std::vector<Waiter*> batch;  // a promoted caller's batch, itself first
    std::condition_variable wake;
  };

  /// The next batch is everything queued now (up to the bounds), run by the oldest caller on its
  /// own thread. It is gathered here, under the lock, not when that caller wakes: a second batch
  /// ending before then must find those callers gone (it once promoted the same caller again,
  /// and its slot was lost for good: under load the lane fell to one batch in flight).
  template <typename Weight>
  void promoteNext(Weight& weight) {
    Waiter* next = m_queue.front();
    m_queue.pop_front();
    next->batch.push_back(next);
    std::size_t load = weight(*next->job);
    while (!m_queue.empty() && next->batch.size() < m_maxJobs && load < m_maxWeight) {
      next->batch.push_back(m_queue.front());
      load += weight(*m_queue.front()->job);
      m_queue.pop_front();
    }
    next->leads = true;
    next->wake.notify_one();
  }

  std::unique_ptr<InFlightLimit> m_ownLimit;  // a fixed lane's
  InFlightLimit& m_limit;
  std::size_t m_maxJobs;
  std::size_t m_maxWeight;
  mutable std::mutex m_mutex;
  std::deque<Waiter*> m_queue;  // callers waiting, oldest first
  std::size_t m_inFlight = 0;   // batches running, or whose next runner is being promoted
};

}  // namespace idem::store
