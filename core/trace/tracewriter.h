#pragma once
// Writes the decisions (executed, replayed, conflict, mismatch, rejected_expired) to
// idem.events in batches from a background thread, so a replay stays one read-only round trip
// and a completion one UPDATE. Executions are queued once their key says done; decisions the
// store makes inside a write (lease takeover, release, lease lost) are written by that write.
// A crash loses at most the events still queued (one flush interval); never a key.
// Values reach the batch storable: bytes that are not UTF-8 and NUL become U+FFFD (counted as
// repaired), since one value PostgreSQL refuses would fail the whole COPY. A row the server
// still refuses (a CHECK, a value out of range) is isolated by splitting the failed batch: it
// alone is dropped and counted as refused, every other row is written.
// A retry storm is folded: within one batch, the first few identical decisions on a key are
// rows of their own and the rest become one row with a count (idem.events.repeats, last_at).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/store/pool.h"
#include "core/trace/outcome.h"

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
  Outcome outcome = Outcome::Executed;
  std::string_view fingerprint;  // raw bytes
  int status = 0;
  double latencyMs = 0;
  std::string_view requestId;
  std::string_view detail;
  /// A duplicate across keys (OutcomeKind::CrossKey): the earlier key whose execution this
  /// request matched. Empty otherwise.
  std::string_view relatedKey;
  bool execution = false;  // never folded, and never dropped for a full queue
};

class TraceWriter {
 public:
  struct Options {
    std::chrono::milliseconds flushInterval{100};
    std::size_t maxBatch = 1000;
    std::size_t maxQueued = 100000;  // beyond this new events are dropped (and counted)
    bool enabled = true;             // false: record() discards (the bench's "trace off" row)
    // Identical decisions on one key (same generation, outcome, status, fingerprint) kept as
    // rows of their own per batch; the rest of them fold into one row. 0: never fold.
    std::size_t foldAfter = 3;
    /// The service every row belongs to: a process enforces for one (servicename.h).
    std::string service = "default";
  };
  TraceWriter(store::Pool& pool, Options options);
  explicit TraceWriter(store::Pool& pool) : TraceWriter(pool, Options{}) {}
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  /// Flushes what is queued (best effort), then stops the thread.
  ~TraceWriter();

  void record(const Event& event);
  /// The service whose decisions this writer records (Options::service).
  [[nodiscard]] const std::string& service() const { return m_options.service; }
  /// Blocks until everything queued so far is written or the store fails. For tests and shutdown.
  bool flush();

  /// Rows waiting for the next COPY (a folded storm adds one row at batch time).
  [[nodiscard]] std::size_t queued() const;
  /// Events (not rows) written, dropped: a folded row counts every decision it stands for.
  [[nodiscard]] long long written() const { return m_written.load(); }
  [[nodiscard]] long long dropped() const { return m_dropped.load(); }
  /// Of the dropped events, those in rows the server refused (the rest: queue full, shutdown).
  [[nodiscard]] long long refused() const { return m_refused.load(); }
  /// Events written with a value made storable (invalid UTF-8 or NUL replaced by U+FFFD).
  [[nodiscard]] long long repaired() const { return m_repaired.load(); }

 private:
  enum class BatchResult { Written, Retry, Refused };
  /// A storm being folded in the current batch: the row that will stand for its decisions.
  /// Strings owned here: the recorded views die with record().
  struct Fold {
    std::string identity;
    long long folded = 0;
    long long firstAtMs = 0, lastAtMs = 0;
    double maxLatencyMs = 0;
    int generation = 0, status = 0;
    Outcome outcome = Outcome::Executed;
    std::string tenant, endpoint, key, tier, fingerprint, requestId, detail, relatedKey;
  };
  /// How many identical decisions the current batch holds, found by the hash of their identity
  /// in an open-addressing table that never allocates: this runs under the lock for every
  /// decision, and a node-based map there cost a quarter of the replay rate.
  struct FoldSlot {
    std::uint64_t hash = 0;
    std::uint32_t window = 0;  // the batch the slot belongs to; older slots are free
    std::uint32_t kept = 0;    // decisions written as rows of their own
    std::int32_t fold = -1;    // index into m_folds once the decisions fold
  };
  static constexpr std::size_t kFoldSlots = 8192;  // a power of two, well above a batch's rows
  static constexpr std::size_t kFoldProbes = 8;
  FoldSlot* foldSlot(std::uint64_t hash);
  /// Counts the decision into the slot's storm row; false when another identity owns the slot.
  bool fold(FoldSlot& slot, const std::string& identity, const Event& e);
  void run();
  /// Adds one row per folded storm to the pending rows and starts a new fold window.
  void closeFoldWindow();
  BatchResult writeBatch(std::string_view rows, std::string* sqlstate = nullptr);
  /// What became of a batch the server refused, row by row.
  struct Isolation {
    long long writtenEvents = 0;
    long long refusedEvents = 0;
    bool unreachable = false;  // the store went away midway: `retry` holds the rows not written
    std::string retry;
    std::size_t retryRows = 0;
    long long retryEvents = 0;
    int attemptsLeft = 0;  // COPYs this batch may still take before failing parts are dropped whole
  };
  /// Writes `rows` (`count` of them) by halves until each refused row stands alone.
  void isolate(std::string_view rows, std::size_t count, Isolation& out);
  void isolateHalves(std::string_view rows, std::size_t count, Isolation& out);

  store::Pool& m_pool;
  Options m_options;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::condition_variable m_flushed;
  std::string m_pending;  // COPY text rows, oldest first
  std::size_t m_pendingRows = 0;
  long long m_pendingEvents = 0;  // decisions the pending rows (and open folds) stand for
  std::vector<FoldSlot> m_foldSlots;
  std::uint32_t m_foldWindow = 1;
  std::vector<Fold> m_folds;  // this batch's folded storms (few: one per storming key)
  std::string m_writing;  // the batch being written (writer thread only)
  bool m_stopping = false;
  bool m_flushRequested = false;
  long long m_enqueued = 0;
  long long m_done = 0;  // enqueued events that were written or given up on
  std::atomic<long long> m_written{0};
  std::atomic<long long> m_dropped{0};
  std::atomic<long long> m_refused{0};
  std::atomic<long long> m_repaired{0};
  std::thread m_thread;
};

}  // namespace idem::trace
