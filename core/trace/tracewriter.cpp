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

void appendTimestamp(std::string& line, long long epochMs) {
  const text::CivilTime t = text::civilFromEpochMs(epochMs);
  text::appendPadded(line, t.year, 4);
  line += '-';
  text::appendPadded(line, t.month, 2);
  line += '-';
  text::appendPadded(line, t.day, 2);
  line += ' ';
  text::appendClock(line, t);
  line += '.';
  text::appendPadded(line, t.millisecond, 3);
  line += "+00";
}

void appendOptionalInt(std::string& line, long long v) { line += v == 0 ? std::string("\\N") : std::to_string(v); }

void appendOptionalText(std::string& line, std::string_view v) {
  if (v.empty()) line += "\\N";
  else pg::appendCopyField(line, v);
}

void appendRow(std::string& out, const Event& e) {
  appendTimestamp(out, e.atMs);
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
  if (e.fingerprint.empty()) out += "\\N";
  else out += "\\\\x" + fp::toHex(e.fingerprint);  // bytea hex input, its backslash escaped for COPY
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

void TraceWriter::record(Event event) {
  if (!m_options.enabled) return;
  bool full = false;
  {
    std::lock_guard lock(m_mutex);
    if (m_queue.size() >= m_options.maxQueued) {
      m_queue.pop_front();
      ++m_done;
      ++m_dropped;
    }
    m_queue.push_back(std::move(event));
    ++m_enqueued;
    full = m_queue.size() >= m_options.maxBatch;
  }
  if (full) m_wake.notify_one();
}

bool TraceWriter::flush() {
  std::unique_lock lock(m_mutex);
  const long long target = m_enqueued;
  const long long droppedBefore = m_dropped.load();
  m_wake.notify_one();
  m_flushed.wait_for(lock, std::chrono::seconds(30), [&] { return m_done >= target; });
  return m_done >= target && m_dropped.load() == droppedBefore;
}

std::size_t TraceWriter::queued() const {
  std::lock_guard lock(m_mutex);
  return m_queue.size();
}

void TraceWriter::run() {
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_wake.wait_for(lock, m_options.flushInterval,
                    [&] { return m_stopping || m_queue.size() >= m_options.maxBatch; });
    while (!m_queue.empty()) {
      std::deque<Event> batch;
      while (!m_queue.empty() && batch.size() < m_options.maxBatch) {
        batch.push_back(std::move(m_queue.front()));
        m_queue.pop_front();
      }
      const auto n = static_cast<long long>(batch.size());
      lock.unlock();  // the insert is a round trip: never under the lock
      const BatchResult result = writeBatch(batch);
      lock.lock();
      if (result == BatchResult::Refused) {
        m_dropped += n;
        m_done += n;
        continue;
      }
      if (result == BatchResult::Retry) {
        if (m_stopping) {
          m_dropped += n;
          m_done += n;
          break;
        }
        // Store unreachable: put the batch back and try again at the next interval.
        for (auto it = batch.rbegin(); it != batch.rend(); ++it) m_queue.push_front(std::move(*it));
        break;
      }
      m_written += n;
      m_done += n;
    }
    m_flushed.notify_all();
    if (m_stopping && (m_queue.empty() || m_done >= m_enqueued)) return;
    if (m_stopping) {
      // The store stays down at shutdown: give up on what remains, counted as dropped.
      m_dropped += static_cast<long long>(m_queue.size());
      m_done += static_cast<long long>(m_queue.size());
      m_queue.clear();
      m_flushed.notify_all();
      return;
    }
  }
}

TraceWriter::BatchResult TraceWriter::writeBatch(std::deque<Event>& batch) {
  std::string data;
  data.reserve(batch.size() * 200);
  for (const auto& e : batch) appendRow(data, e);
  try {
    auto lease = m_pool.acquire();
    try {
      lease.conn().copyIn(kCopySql, data);
    } catch (const pg::Unavailable&) {
      lease.discard();
      throw;
    }
    return BatchResult::Written;
  } catch (const pg::Unavailable&) {
    return BatchResult::Retry;
  } catch (const pg::QueryError&) {
    // A batch the server refuses will never pass: drop it (counted) rather than block the queue.
    return BatchResult::Refused;
  }
}

}  // namespace idem::trace
