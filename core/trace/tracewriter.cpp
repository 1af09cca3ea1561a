#include "core/trace/tracewriter.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "core/fingerprint/fingerprint.h"
#include "core/text/civiltime.h"
#include "core/text/utf8.h"

namespace idem::trace {
namespace {
// COPY is the cheapest append PostgreSQL has: one round trip per batch, no per-row parsing of
// SQL or JSON. Measured: the trace is a replay's only write, so its cost bounds replay rates.
constexpr const char* kCopySql =
    "COPY idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, fingerprint, status, "
    "latency_ms, request_id, detail, repeats, last_at, service, related_key) FROM STDIN";

void appendOptionalInt(std::string& line, long long v) {
  if (v == 0) {
    line += "\\N";
    return;
  }
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
  line.append(digits, end);
}

/// Appends a text field PostgreSQL will take: bytes that are not UTF-8 and NUL (which no text
/// value may hold) become U+FFFD, like the endpoint's JSON output. Returns false if it did so.
bool appendStorable(std::string& line, std::string_view v) {
  if (v.find('\0') == std::string_view::npos && text::isValidUtf8(v)) {
    pg::appendCopyField(line, v);  // the hot path: already valid
    return true;
  }
  std::size_t runStart = 0;
  for (std::size_t i = 0; i < v.size();) {
    const std::size_t at = i;
    if (v[i] != '\0' && text::decodeUtf8(v, i)) continue;
    pg::appendCopyField(line, v.substr(runStart, at - runStart));
    line += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
    i = runStart = at + 1;
  }
  pg::appendCopyField(line, v.substr(runStart));
  return false;
}

bool appendOptionalText(std::string& line, std::string_view v) {
  if (!v.empty()) return appendStorable(line, v);
  line += "\\N";
  return true;
}

/// The COPY text row of one decision, or of `repeats` identical ones from e.atMs to lastAtMs,
/// in `service` (a vetted name: servicename.h). Returns false when a value had to be made storable.
bool appendRow(std::string& out, const Event& e, std::string_view service, long long repeats = 1,
               long long lastAtMs = 0) {
  bool storable = true;
  text::appendDateTime(out, e.atMs, ' ', "+00");
  out += '\t';
  storable &= appendStorable(out, e.tenant);
  out += '\t';
  storable &= appendStorable(out, e.endpoint);
  out += '\t';
  storable &= appendStorable(out, e.key);
  out += '\t';
  appendOptionalInt(out, e.generation);
  out += '\t';
  storable &= appendStorable(out, e.tier);
  out += '\t';
  out += sqlName(e.outcome);  // ours, plain ASCII
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
  storable &= appendOptionalText(out, e.requestId);
  out += '\t';
  storable &= appendOptionalText(out, e.detail);
  out += '\t';
  appendOptionalInt(out, repeats);
  out += '\t';
  if (repeats > 1) text::appendDateTime(out, lastAtMs, ' ', "+00");
  else out += "\\N";
  out += '\t';
  pg::appendCopyField(out, service);
  out += '\t';
  storable &= appendOptionalText(out, e.relatedKey);
  out += '\n';
  return storable;
}

/// The decisions COPY text rows stand for: the sum of their `repeats` column (the 13th).
long long eventsIn(std::string_view rows) {
  long long events = 0;
  // Fields escape their tabs and newlines, so each literal one ends a field or a row.
  for (std::size_t lineStart = 0; lineStart < rows.size();) {
    const std::size_t lineEnd = std::min(rows.find('\n', lineStart), rows.size());
    const std::string_view line = rows.substr(lineStart, lineEnd - lineStart);
    std::size_t at = 0;
    for (int tabs = 0; tabs < 12 && at < line.size(); ++tabs) at = std::min(line.find('\t', at), line.size()) + 1;
    long long repeats = 1;
    if (at < line.size()) std::from_chars(line.data() + at, line.data() + line.size(), repeats);
    events += repeats;
    lineStart = lineEnd + 1;
  }
  return events;
}

/// SQLSTATE classes of an error in the data of some row (22: data exception, 23: integrity
/// constraint): another row of the batch may well be fine. Anything else (permissions, a missing
/// table, a read-only store) refuses every row alike.
bool refusedForARow(const std::string& sqlstate) { return sqlstate.starts_with("22") || sqlstate.starts_with("23"); }

/// COPYs one refused batch may take to isolate its bad rows: enough for dozens of them in a
/// 100 000-row batch; a batch with more bad rows than that drops its failing parts whole
/// rather than hold the writer for thousands of round trips.
constexpr int kIsolationAttempts = 512;

void appendField(std::string& out, std::string_view field) {
  const auto size = static_cast<std::uint32_t>(field.size());
  out.append(reinterpret_cast<const char*>(&size), sizeof size);  // length-prefixed: unambiguous
  out.append(field);
}

/// What makes two decisions identical for folding: the key and what a support person would
/// tell apart (generation, outcome, status, fingerprint). Request ids and times may differ.
void appendIdentity(std::string& out, const Event& e) {
  appendField(out, e.tenant);
  appendField(out, e.endpoint);
  appendField(out, e.key);
  appendField(out, sqlName(e.outcome));
  appendField(out, e.fingerprint);
  appendField(out, e.relatedKey);
  const int numbers[2] = {e.generation, e.status};
  out.append(reinterpret_cast<const char*>(numbers), sizeof numbers);
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
  // Formatted and hashed before taking the lock, into per-thread buffers that keep their capacity.
  thread_local std::string row;
  thread_local std::string identity;
  row.clear();
  if (!appendRow(row, event, m_options.service)) ++m_repaired;
  identity.clear();
  std::uint64_t hash = 0;
  const bool foldable = m_options.foldAfter > 0 && !event.execution;
  if (foldable) {
    appendIdentity(identity, event);
    hash = std::hash<std::string_view>{}(identity);
  }
  bool full = false;
  {
    std::lock_guard lock(m_mutex);
    ++m_enqueued;
    FoldSlot* slot = foldable ? foldSlot(hash) : nullptr;
    if (slot && slot->kept >= m_options.foldAfter && fold(*slot, identity, event)) {
      ++m_pendingEvents;  // counted into the storm's row: costs no queue space
      return;
    }
    // An execution is queued only after its key committed, so executions cannot pile up while
    // the store is down: the cap is for the read-only decisions of an outage's retry storm.
    if (m_pendingRows >= m_options.maxQueued && !event.execution) {
      ++m_done;
      ++m_dropped;
      return;
    }
    m_pending += row;
    ++m_pendingRows;
    ++m_pendingEvents;
    if (slot) ++slot->kept;
    full = m_pendingRows >= m_options.maxBatch;
  }
  if (full) m_wake.notify_one();
}

TraceWriter::FoldSlot* TraceWriter::foldSlot(std::uint64_t hash) {
  if (m_foldSlots.empty()) m_foldSlots.resize(kFoldSlots);
  for (std::size_t probe = 0; probe < kFoldProbes; ++probe) {
    FoldSlot& s = m_foldSlots[(hash + probe) & (kFoldSlots - 1)];
    if (s.window != m_foldWindow) {
      s = FoldSlot{hash, m_foldWindow, 0, -1};
      return &s;
    }
    if (s.hash == hash) return &s;
  }
  return nullptr;  // a crowded batch: this decision is simply written as a row
}

bool TraceWriter::fold(FoldSlot& slot, const std::string& identity, const Event& e) {
  if (slot.fold < 0) {
    slot.fold = static_cast<std::int32_t>(m_folds.size());
    Fold& f = m_folds.emplace_back();
    f.identity = identity;
    f.firstAtMs = e.atMs;
    f.generation = e.generation;
    f.status = e.status;
    f.tenant = e.tenant;
    f.endpoint = e.endpoint;
    f.key = e.key;
    f.tier = e.tier;
    f.outcome = e.outcome;
    f.fingerprint = e.fingerprint;
    f.detail = e.detail;
    f.relatedKey = e.relatedKey;
    f.maxLatencyMs = e.latencyMs;
  }
  Fold& f = m_folds[static_cast<std::size_t>(slot.fold)];
  if (f.identity != identity) return false;  // two identities, one hash: keep this one as a row
  ++f.folded;
  f.firstAtMs = std::min(f.firstAtMs, e.atMs);
  f.lastAtMs = std::max(f.lastAtMs, e.atMs);
  f.maxLatencyMs = std::max(f.maxLatencyMs, e.latencyMs);
  f.requestId = e.requestId;
  return true;
}

void TraceWriter::closeFoldWindow() {
  for (const Fold& f : m_folds) {
    Event e;
    e.atMs = f.firstAtMs;
    e.tenant = f.tenant;
    e.endpoint = f.endpoint;
    e.key = f.key;
    e.generation = f.generation;
    e.tier = f.tier;
    e.outcome = f.outcome;
    e.fingerprint = f.fingerprint;
    e.status = f.status;
    e.latencyMs = f.maxLatencyMs;
    e.requestId = f.requestId;
    e.detail = f.detail;
    e.relatedKey = f.relatedKey;
    appendRow(m_pending, e, m_options.service, f.folded, f.lastAtMs);
    ++m_pendingRows;
  }
  m_folds.clear();
  if (++m_foldWindow == 0) {  // wrapped: no slot may look current by accident
    for (auto& s : m_foldSlots) s.window = 0;
    m_foldWindow = 1;
  }
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
    closeFoldWindow();
    if (m_pendingRows > 0) {
      // The two buffers trade places and keep their capacity, so record() does not grow a
      // fresh buffer (copying it under the lock) after every write.
      std::string& batch = m_writing;
      batch.clear();
      batch.swap(m_pending);
      const auto rows = m_pendingRows;
      const long long n = m_pendingEvents;
      m_pendingRows = 0;
      m_pendingEvents = 0;
      lock.unlock();  // the COPY is a round trip: never under the lock
      std::string sqlstate;
      const BatchResult result = writeBatch(batch, &sqlstate);
      Isolation isolation;
      const bool isolated = result == BatchResult::Refused && refusedForARow(sqlstate) && rows > 1;
      if (isolated) {
        // Some row is bad: write the batch by halves so that it alone is lost.
        isolation.attemptsLeft = kIsolationAttempts;
        isolateHalves(batch, rows, isolation);
      }
      lock.lock();
      if (isolated) {
        m_written += isolation.writtenEvents;
        m_dropped += isolation.refusedEvents;
        m_refused += isolation.refusedEvents;
        m_done += isolation.writtenEvents + isolation.refusedEvents;
        failed = isolation.refusedEvents > 0;
        if (isolation.unreachable) {  // the rest goes back in front, like a failed batch
          isolation.retry += m_pending;
          m_pending.swap(isolation.retry);
          m_pendingRows += isolation.retryRows;
          m_pendingEvents += isolation.retryEvents;
        }
      } else if (result == BatchResult::Written) {
        m_written += n;
        m_done += n;
      } else if (result == BatchResult::Retry && !m_stopping) {
        // Store unreachable: put the rows back in front and try again at the next interval.
        batch += m_pending;
        m_pending.swap(batch);
        m_pendingRows += rows;
        m_pendingEvents += n;
      } else {
        // Refused (the server will never take this batch), or the store is down at shutdown:
        // given up, counted as dropped, so the queue does not block behind it.
        if (result == BatchResult::Refused) m_refused += n;
        m_dropped += n;
        m_done += n;
        failed = true;
      }
    }
    m_flushed.notify_all();
    if (!m_stopping) continue;
    if ((m_pendingRows > 0 || !m_folds.empty()) && !failed) continue;  // arrived while stopping
    m_dropped += m_pendingEvents;
    m_done += m_pendingEvents;
    m_pending.clear();
    m_folds.clear();
    m_pendingRows = 0;
    m_pendingEvents = 0;
    m_flushed.notify_all();
    return;
  }
}

void TraceWriter::isolate(std::string_view rows, std::size_t count, Isolation& out) {
  if (out.unreachable) {  // the store went away: what is left waits for the next attempt
    out.retry.append(rows);
    out.retryRows += count;
    out.retryEvents += eventsIn(rows);
    return;
  }
  std::string sqlstate;
  const BatchResult result = writeBatch(rows, &sqlstate);
  --out.attemptsLeft;
  if (result == BatchResult::Written) {
    out.writtenEvents += eventsIn(rows);
    return;
  }
  if (result == BatchResult::Retry) {
    out.unreachable = true;
    isolate(rows, count, out);
    return;
  }
  if (count == 1 || !refusedForARow(sqlstate) || out.attemptsLeft < 2) {
    out.refusedEvents += eventsIn(rows);
    return;
  }
  isolateHalves(rows, count, out);
}

void TraceWriter::isolateHalves(std::string_view rows, std::size_t count, Isolation& out) {
  const std::size_t half = count / 2;
  std::size_t cut = 0;
  for (std::size_t i = 0; i < half; ++i) cut = rows.find('\n', cut) + 1;
  isolate(rows.substr(0, cut), half, out);
  isolate(rows.substr(cut), count - half, out);
}

TraceWriter::BatchResult TraceWriter::writeBatch(std::string_view rows, std::string* sqlstate) {
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
  } catch (const pg::QueryError& e) {
    if (sqlstate) *sqlstate = e.sqlstate();
    return BatchResult::Refused;
  }
}

}  // namespace idem::trace
