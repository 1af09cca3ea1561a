#pragma once
// Writes the read-only decisions (replayed, conflict, mismatch, rejected_expired, waited) to
// idem.events in batches from a background thread, so a replay stays one read-only round trip.
// Executions are not queued here: they are written in the same transaction as their key.
// A crash loses at most the events still queued (one flush interval); never a key.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "core/store/pool.h"

namespace idem::trace {

/// One decision to append. The views only need to live for the record() call: the row is
/// written out as COPY text right there, so queueing an event allocates nothing per field.
struct Event {
  long long atMs = 0;  // the database clock at the decision (from the claim's answer)
  std::string_view tenant;
  std::string_view endpoint;
  std::string_view key;
  int generation = 0;
  std::string_view tier;
  std::string_view outcome;
  std::string_view fingerprint;  // raw bytes
  int status = 0;
  double latencyMs = 0;
  std::string_view requestId;
  std::string_view detail;
};

class TraceWriter {
 public:
  struct Options {
    std::chrono::milliseconds flushInterval{100};
    std::size_t maxBatch = 1000;
    std::size_t maxQueued = 100000;  // beyond this new events are dropped (and counted)
    bool enabled = true;             // false: record() discards (the bench's "trace off" row)
  };
  TraceWriter(store::Pool& pool, Options options);
  explicit TraceWriter(store::Pool& pool) : TraceWriter(pool, Options{}) {}
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  /// Flushes what is queued (best effort), then stops the thread.
  ~TraceWriter();

  void record(const Event& event);
  /// Blocks until everything queued so far is written or the store fails. For tests and shutdown.
  bool flush();

  [[nodiscard]] std::size_t queued() const;
  [[nodiscard]] long long written() const { return m_written.load(); }
  [[nodiscard]] long long dropped() const { return m_dropped.load(); }

 private:
  enum class BatchResult { Written, Retry, Refused };
  void run();
  BatchResult writeBatch(const std::string& rows);

  store::Pool& m_pool;
  Options m_options;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::condition_variable m_flushed;
  std::string m_pending;  // COPY text rows, oldest first
  std::size_t m_pendingRows = 0;
  std::string m_writing;  // the batch being written (writer thread only)
  bool m_stopping = false;
  bool m_flushRequested = false;
  long long m_enqueued = 0;
  long long m_done = 0;  // enqueued events that were written or given up on
  std::atomic<long long> m_written{0};
  std::atomic<long long> m_dropped{0};
  std::thread m_thread;
};

}  // namespace idem::trace
