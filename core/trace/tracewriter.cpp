#include "core/trace/tracewriter.h"

#include <charconv>

#include "core/fingerprint/fingerprint.h"
#include "core/text/civiltime.h"

namespace idem::trace {
namespace {
// COPY is the cheapest append PostgreSQL has: one round trip per batch, no per-row parsing of
// SQL or JSON. Measured: the trace is a replay's only write, so its cost bounds replay rates.
constexpr const char* kCopySql =
    "COPY idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, fingerprint, status, "
    "latency_ms, request_id, detail) FROM STDIN";

void appendOptionalInt(std::string& line, long long v) {
  if (v == 0) {
    line += "\\N";
    return;
  }
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
  line.append(digits, end);
}

void appendOptionalText(std::string& line, std::string_view v) {
  if (v.empty()) line += "\\N";
  else pg::appendCopyField(line, v);
}

void appendRow(std::string& out, const Event& e) {
  text::appendDateTime(out, e.atMs, ' ', "+00");
  out += '\t';
  pg::appendCopyField(out, e.tenant);
  out += '\t';
  pg::appendCopyField(out, e.endpoint);
  out += '\t';
  pg::appendCopyField(out, e.key);
  out += '\t';
  appendOptionalInt(out, e.generation);
  out += '\t';
  pg::appendCopyField(out, e.tier);
  out += '\t';
  pg::appendCopyField(out, e.outcome);
  out += '\t';
  if (e.fingerprint.empty()) {
    out += "\\N";
  } else {
    out += "\\\\x";  // bytea hex input, its backslash escaped for COPY
    fp::appendHex(out, e.fingerprint);
  }
  out += '\t';
  appendOptionalInt(out, e.status);
  out += '\t';
  char latency[32];
  const auto written = std::to_chars(latency, latency + sizeof latency, e.latencyMs, std::chars_format::fixed, 3);
  out.append(latency, written.ec == std::errc{} ? written.ptr : latency);
  out += '\t';
  appendOptionalText(out, e.requestId);
  out += '\t';
  appendOptionalText(out, e.detail);
  out += '\n';
}
}  // namespace

TraceWriter::TraceWriter(store::Pool& pool, Options options)
    : m_pool(pool), m_options(options), m_thread([this] { run(); }) {}

TraceWriter::~TraceWriter() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  m_thread.join();
}

void TraceWriter::record(const Event& event) {
  if (!m_options.enabled) return;
  // Formatted before taking the lock, into a per-thread buffer that keeps its capacity.
  thread_local std::string row;
  row.clear();
  appendRow(row, event);
  bool full = false;
  {
    std::lock_guard lock(m_mutex);
    ++m_enqueued;
    if (m_pendingRows >= m_options.maxQueued) {
      ++m_done;
      ++m_dropped;
      return;
    }
    m_pending += row;
    ++m_pendingRows;
    full = m_pendingRows >= m_options.maxBatch;
  }
  if (full) m_wake.notify_one();
}

bool TraceWriter::flush() {
  std::unique_lock lock(m_mutex);
  const long long target = m_enqueued;
  const long long droppedBefore = m_dropped.load();
  m_flushRequested = true;
  m_wake.notify_one();
  m_flushed.wait_for(lock, std::chrono::seconds(30), [&] { return m_done >= target; });
  return m_done >= target && m_dropped.load() == droppedBefore;
}

std::size_t TraceWriter::queued() const {
  std::lock_guard lock(m_mutex);
  return m_pendingRows;
}

void TraceWriter::run() {
  std::unique_lock lock(m_mutex);
  for (;;) {
    // One COPY per interval, or sooner when a batch is full or someone flushes: each COPY is
    // a commit, and writing again as soon as a few rows arrived cost more than the rows did.
    m_wake.wait_for(lock, m_options.flushInterval, [&] {
      return m_stopping || m_flushRequested || m_pendingRows >= m_options.maxBatch;
    });
    m_flushRequested = false;
    bool failed = false;
    if (m_pendingRows > 0) {
      // The two buffers trade places and keep their capacity, so record() does not grow a
      // fresh buffer (copying it under the lock) after every write.
      std::string& batch = m_writing;
      batch.clear();
      batch.swap(m_pending);
      const auto n = static_cast<long long>(m_pendingRows);
      m_pendingRows = 0;
      lock.unlock();  // the COPY is a round trip: never under the lock
      const BatchResult result = writeBatch(batch);
      lock.lock();
      if (result == BatchResult::Written) {
        m_written += n;
        m_done += n;
      } else if (result == BatchResult::Retry && !m_stopping) {
        // Store unreachable: put the rows back in front and try again at the next interval.
        batch += m_pending;
        m_pending.swap(batch);
        m_pendingRows += static_cast<std::size_t>(n);
      } else {
        // Refused (the server will never take this batch), or the store is down at shutdown:
        // given up, counted as dropped, so the queue does not block behind it.
        m_dropped += n;
        m_done += n;
        failed = true;
      }
    }
    m_flushed.notify_all();
    if (!m_stopping) continue;
    if (m_pendingRows > 0 && !failed) continue;  // rows that arrived while stopping
    m_dropped += static_cast<long long>(m_pendingRows);
    m_done += static_cast<long long>(m_pendingRows);
    m_pending.clear();
    m_pendingRows = 0;
    m_flushed.notify_all();
    return;
  }
}

TraceWriter::BatchResult TraceWriter::writeBatch(const std::string& rows) {
  try {
    auto lease = m_pool.acquire();
    try {
      lease.conn().copyIn(kCopySql, rows);
    } catch (const pg::Unavailable&) {
      lease.discard();
      throw;
    }
    return BatchResult::Written;
  } catch (const pg::Unavailable&) {
    return BatchResult::Retry;
  } catch (const pg::QueryError&) {
    return BatchResult::Refused;
  }
}

}  // namespace idem::trace
