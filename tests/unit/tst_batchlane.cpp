// The lane that batches concurrent claims and completions (core/store/batchlane.h), without a
// store: every job runs exactly once, and after heavy use the lane still runs as many batches at
// once as it was given. It once lost a slot whenever two batches ended before the caller promoted
// into the first one's slot woke up (the second promoted the same caller again): under load the
// lane fell to one batch in flight for good, and new keys queued behind it.
#include <QtTest>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "core/store/batchlane.h"

using namespace idem::store;

namespace {

struct Job {
  int runs = 0;
};

constexpr auto kOne = [](const Job&) { return std::size_t{1}; };

}  // namespace

class TestBatchLane : public QObject {
  Q_OBJECT

 private slots:
  void everyJobRunsOnceAndEverySlotComesBack() {
    constexpr std::size_t kSlots = 4;
    BatchLane<Job> lane(kSlots, 128, 128);
    std::atomic<long> wrongRuns{0}, running{0}, mostAtOnce{0};
    std::vector<std::thread> callers;
    for (int t = 0; t < 16; ++t)
      callers.emplace_back([&] {
        for (int i = 0; i < 4000; ++i) {
          Job job;
          lane.submit(job, [&](std::vector<Job*>& jobs) {
            const long now = ++running;
            for (long seen = mostAtOnce.load(); now > seen && !mostAtOnce.compare_exchange_weak(seen, now);) {
            }
            for (auto* j : jobs) ++j->runs;
            if (jobs.size() % 2) std::this_thread::yield();  // batches end at uneven times
            --running;
          }, kOne);
          if (job.runs != 1) ++wrongRuns;
        }
      });
    for (auto& c : callers) c.join();
    QCOMPARE(wrongRuns.load(), 0L);
    QVERIFY(mostAtOnce.load() <= static_cast<long>(kSlots));
    QCOMPARE(lane.waiting(), std::size_t{0});
    QCOMPARE(lane.inFlight(), std::size_t{0});  // the old lane ended with slots held by nobody

    // And the slots are usable: four callers, each batch held until four run at once.
    std::mutex m;
    std::condition_variable cv;
    int atOnce = 0;
    std::atomic<int> metTheOthers{0};
    std::vector<std::thread> four;
    for (std::size_t t = 0; t < kSlots; ++t)
      four.emplace_back([&] {
        Job job;
        lane.submit(job, [&](std::vector<Job*>&) {
          std::unique_lock lock(m);
          ++atOnce;
          cv.notify_all();
          if (cv.wait_for(lock, std::chrono::seconds(10), [&] { return atOnce >= static_cast<int>(kSlots); }))
            ++metTheOthers;
        }, kOne);
      });
    for (auto& t : four) t.join();
    QCOMPARE(metTheOthers.load(), static_cast<int>(kSlots));
  }

  void aLoneCallerRunsAtOnceAndQueuedOnesGoTogether() {
    BatchLane<Job> lane(1, 128, 128);
    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    std::vector<std::size_t> batchSizes;
    Job first;
    std::thread holder([&] {
      lane.submit(first, [&](std::vector<Job*>& jobs) {
        batchSizes.push_back(jobs.size());
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return release; });
      }, kOne);
    });
    QTRY_COMPARE(lane.inFlight(), std::size_t{1});
    std::vector<Job> queued(5);
    std::vector<std::thread> callers;
    for (auto& job : queued)
      callers.emplace_back([&lane, &job, &batchSizes] {
        lane.submit(job, [&](std::vector<Job*>& jobs) {
          batchSizes.push_back(jobs.size());
          for (auto* j : jobs) ++j->runs;
        }, kOne);
      });
    QTRY_COMPARE(lane.waiting(), std::size_t{5});
    {
      std::lock_guard lock(m);
      release = true;
    }
    cv.notify_all();
    holder.join();
    for (auto& c : callers) c.join();
    QCOMPARE(batchSizes, (std::vector<std::size_t>{1, 5}));  // the five that queued: one batch
    for (const auto& job : queued) QCOMPARE(job.runs, 1);
    QCOMPARE(lane.inFlight(), std::size_t{0});
  }
};

QTEST_GUILESS_MAIN(TestBatchLane)
#include "tst_batchlane.moc"
