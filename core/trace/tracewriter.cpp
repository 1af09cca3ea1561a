#include "core/trace/tracewriter.h"

#include <nlohmann/json.hpp>

#include "core/fingerprint/fingerprint.h"

namespace idem::trace {
namespace {
// One statement per batch: the batch travels as one JSON parameter.
constexpr const char* kInsertSql =
    "INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, fingerprint, status, "
    "latency_ms, request_id, detail) "
    "SELECT to_timestamp(x.at_ms / 1000.0), x.tenant, x.endpoint, x.idem_key, nullif(x.generation, 0), x.tier, "
    "x.outcome, decode(x.fp, 'hex'), nullif(x.status, 0), x.latency_ms, x.request_id, nullif(x.detail, '') "
    "FROM jsonb_to_recordset($1::jsonb) AS x(at_ms bigint, tenant text, endpoint text, idem_key text, "
    "generation int, tier text, outcome text, fp text, status int, latency_ms float8, request_id text, detail text)";
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
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& e : batch)
    rows.push_back({{"at_ms", e.atMs},
                    {"tenant", e.tenant},
                    {"endpoint", e.endpoint},
                    {"idem_key", e.key},
                    {"generation", e.generation},
                    {"tier", e.tier},
                    {"outcome", e.outcome},
                    {"fp", fp::toHex(e.fingerprint)},
                    {"status", e.status},
                    {"latency_ms", e.latencyMs},
                    {"request_id", e.requestId},
                    {"detail", e.detail}});
  try {
    auto lease = m_pool.acquire();
    try {
      lease.conn().execPrepared("idem_trace_insert", kInsertSql, {rows.dump()});
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
