#pragma once
// A lane where concurrent callers' jobs go to the store together. No timer: a caller that finds
// a free slot runs its own job at once (one client alone sees a single statement's latency);
// callers that arrive while every slot has a batch in flight queue, and when one ends the oldest
// of them runs everything queued as the next batch — on its own thread, so nobody hands work to a
// background thread and back. A few batches may be in flight at once (maxInFlight): each
// commit waits for its WAL flush, and the server flushes concurrent commits together.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

namespace idem::store {

template <typename Job>
class BatchLane {
 public:
  /// A batch holds at most `maxJobs`, and stops growing once its jobs' weight reaches
  /// `maxWeight` (e.g. response bytes); it always holds at least the job of its runner.
  BatchLane(std::size_t maxInFlight, std::size_t maxJobs, std::size_t maxWeight)
      : m_maxInFlight(maxInFlight < 1 ? 1 : maxInFlight), m_maxJobs(maxJobs), m_maxWeight(maxWeight) {}

  /// Returns once `job` has been through a batch. `run(std::vector<Job*>&)` runs one batch and
  /// must settle every job in it without throwing (a job carries its own outcome or error).
  /// `weight(const Job&)` is its share of maxWeight.
  template <typename Run, typename Weight>
  void submit(Job& job, Run&& run, Weight&& weight) {
    Waiter me(&job);
    std::unique_lock lock(m_mutex);
    std::vector<Waiter*> batch;
    // Queued callers exist only while every slot is in flight: a new one queues behind them.
    if (m_inFlight == m_maxInFlight) {
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
    lock.lock();
    for (auto* w : batch)
      if (w != &me) {
        w->done = true;
        w->wake.notify_one();
      }
    // The next batch is everything queued now (up to the bounds), run by the oldest caller on its
    // own thread. It is gathered here, not when that caller wakes: a second batch ending before
    // then must find those callers gone (it once promoted the same caller again, and its slot
    // was lost for good: under load the lane fell to one batch in flight).
    if (!m_queue.empty()) {
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
    } else {
      --m_inFlight;
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

 private:
  struct Waiter {
    explicit Waiter(Job* j) : job(j) {}
    Job* job;
    bool done = false;
    bool leads = false;
    std::vector<Waiter*> batch;  // a promoted caller's batch, itself first
    std::condition_variable wake;
  };

  std::size_t m_maxInFlight;
  std::size_t m_maxJobs;
  std::size_t m_maxWeight;
  mutable std::mutex m_mutex;
  std::deque<Waiter*> m_queue;  // callers waiting, oldest first
  std::size_t m_inFlight = 0;   // batches running, or whose next runner is being promoted
};

}  // namespace idem::store
