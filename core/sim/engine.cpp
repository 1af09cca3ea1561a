// Discrete-event engine. One priority queue of events ordered by (time, sequence number), so
// ties are broken the same way on every platform; one random stream consumed in event order.
#include "core/sim/engine.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/sim/backoff.h"
#include "core/sim/budget.h"
#include "core/sim/event_queue.h"
#include "core/sim/horizon.h"
#include "core/sim/rng.h"
#include "core/sim/server.h"
#include "core/sim/stats.h"

namespace idem::sim {

namespace {

constexpr Usec kNever = std::numeric_limits<Usec>::max();

enum class EvType : std::uint8_t { Arrival, Send, Start, Done, Timeout };

/// What an answer is. Outage503 and ConnectionError never reached the server's queue;
/// ExecutedLost ran and was stored, but its answer never reached the client.
enum class Kind : std::uint8_t {
  Executed,
  ExecutedLost,
  Replay,
  Conflict,
  Fail500,
  Fail503,
  Outage503,
  ConnectionError
};

struct Event {
  Usec t;
  std::uint64_t seq;
  Usec retryAfter;   // Done: Retry-After carried by the answer, < 0 for none
  std::uint32_t id;  // operation index; Arrival: arrival stream index
  std::uint16_t attempt;
  EvType type;
  Kind kind;
};

struct Earlier {
  bool operator()(const Event& a, const Event& b) const { return a.t != b.t ? a.t < b.t : a.seq < b.seq; }
};

enum class KeyState : std::uint8_t { None, Processing, Done };
enum class ClientState : std::uint8_t { Waiting, Sleeping, Finished };

struct Op {
  Usec t0 = 0;         // first attempt sent
  Usec sentAt = 0;     // latest attempt sent
  Usec storedAt = -1;  // key stored (first receipt or completion); < 0: no key
  Usec leaseUntil = 0;
  BackoffState backoff;
  float lastRetryCost = -1;        // AWS retry quota refund; < 0: no retry taken
  std::uint32_t clientObject = 0;  // clients.client_objects: whose retry budget it spends
  std::uint16_t pending = 0;       // events in the queue that name this operation
  std::uint16_t attempt = 0;
  KeyState key = KeyState::None;
  ClientState client = ClientState::Waiting;
  bool executed = false;
  bool purged = false;  // the key was purged at least once
};

/// One arrival process: Poisson at `rate` over [from, until), at most `limit` operations.
struct ArrivalStream {
  double meanGapUs = 0;
  Usec until = kNever;
  std::int64_t limit = std::numeric_limits<std::int64_t>::max();
  std::int64_t created = 0;
};

class Engine final {
 public:
  Engine(const SimConfig& config, const RunControl& control)
      : m_cfg(config),
        m_p(m_cfg.policy),
        m_control(control),
        m_rng(config.seed),
        m_server(config.server),
        m_budgets(static_cast<std::size_t>(std::max<std::int64_t>(1, config.clients.clientObjects)),
                  RetryBudget(config.policy.budget)) {
    m_result.config = config;
    m_offsets.resize(static_cast<std::size_t>(std::max(2, m_p.maxAttempts + 1)));
    m_ttlPlusLag = m_cfg.store.ttl + m_cfg.store.purgeLag;
  }

  Result run() {
    startArrivals();
    std::uint64_t processed = 0;
    while (!m_queue.empty()) {
      const Event ev = m_queue.top();
      m_queue.pop();
      m_now = ev.t;
      advanceSeries(m_now);
      dispatch(ev);
      if (ev.type != EvType::Arrival) release(ev.id);
      if ((++processed & 0xFFFF) == 0 && checkControl()) break;
    }
    finish();
    return std::move(m_result);
  }

 private:
  // ---- event queue -------------------------------------------------------------------
  void push(Usec t, EvType type, std::uint32_t id, std::uint16_t attempt, Kind kind = Kind::Executed,
            Usec retryAfter = -1) {
    if (type != EvType::Arrival) ++m_ops[id].pending;
    m_queue.push(Event{t, m_seq++, retryAfter, id, attempt, type, kind});
  }

  /// An event of operation id was handled. Once the client is done and no event names the
  /// operation any more, nothing can reach its key again: its slot is reused, so memory
  /// follows the operations in progress, not all operations.
  void release(std::uint32_t id) {
    Op& o = m_ops[id];
    if (--o.pending == 0 && o.client == ClientState::Finished) m_free.push_back(id);
  }

  void dispatch(const Event& ev) {
    switch (ev.type) {
      case EvType::Arrival:
        onArrival(ev.id);
        break;
      case EvType::Send:
        send(ev.id);
        break;
      case EvType::Start:
        start(ev.id, ev.attempt);
        break;
      case EvType::Done:
        done(ev);
        break;
      case EvType::Timeout:
        timeout(ev.id, ev.attempt);
        break;
    }
  }

  bool checkControl() {
    if (m_control.onProgress && m_cfg.clients.operations > 0)
      m_control.onProgress(
          std::min(1.0, static_cast<double>(m_streams[0].created) / static_cast<double>(m_cfg.clients.operations)));
    if (m_control.cancel && m_control.cancel->load(std::memory_order_relaxed)) {
      m_result.cancelled = true;
      return true;
    }
    return false;
  }

  // ---- arrivals ----------------------------------------------------------------------
  void startArrivals() {
    ArrivalStream base;
    base.meanGapUs = static_cast<double>(kUsecPerSecond) / m_cfg.clients.arrivalRatePerSecond;
    base.limit = m_cfg.clients.operations;
    m_streams.push_back(base);
    if (base.limit > 0) push(0, EvType::Arrival, 0, 0);
    for (const auto& e : m_cfg.server.events) {
      if (e.extraRatePerSecond <= 0 || e.duration <= 0) continue;
      ArrivalStream spike;
      spike.meanGapUs = static_cast<double>(kUsecPerSecond) / e.extraRatePerSecond;
      spike.until = e.at + e.duration;
      m_streams.push_back(spike);
      scheduleArrival(static_cast<std::uint32_t>(m_streams.size() - 1), e.at);
    }
  }

  void scheduleArrival(std::uint32_t stream, Usec after) {
    auto& s = m_streams[stream];
    if (s.created >= s.limit) return;
    const Usec t = after + static_cast<Usec>(m_rng.exponential(s.meanGapUs));
    if (t >= s.until) return;
    push(t, EvType::Arrival, stream, 0);
  }

  void onArrival(std::uint32_t stream) {
    auto& s = m_streams[stream];
    ++s.created;
    if (stream == 0) m_lastBaseArrival = m_now;
    std::uint32_t id = 0;
    if (!m_free.empty()) {
      id = m_free.back();
      m_free.pop_back();
      m_ops[id] = Op{};
    } else {
      if (m_ops.size() >= std::numeric_limits<std::uint32_t>::max()) return;
      id = static_cast<std::uint32_t>(m_ops.size());
      m_ops.emplace_back();
    }
    m_ops[id].clientObject = static_cast<std::uint32_t>(m_arrivals++ % m_budgets.size());
    ++m_result.operations;
    ++row().offered;
    send(id);
    scheduleArrival(stream, m_now);
  }

  // ---- client ------------------------------------------------------------------------
  /// When the client stops waiting for the attempt it sent last: the per-attempt timeout or
  /// the operation's deadline, whichever comes first.
  Usec waitLimit(const Op& o) const {
    Usec limit = kNever;
    if (m_p.timeout) limit = o.sentAt + *m_p.timeout;
    if (m_p.deadline) limit = std::min(limit, o.t0 + *m_p.deadline);
    return limit;
  }

  void send(std::uint32_t id) {
    Op& o = m_ops[id];
    ++o.attempt;
    o.sentAt = m_now;
    o.client = ClientState::Waiting;
    ++m_result.attempts;
    ++row().attempts;
    if (o.attempt == 1) {
      o.t0 = m_now;
      budgetOf(o).onFirstAttempt(m_now);
    } else {
      ++row().retries;
      m_offsets[o.attempt].push_back(toSeconds(m_now - o.t0));
    }
    const Usec limit = waitLimit(o);
    const Usec fast = m_cfg.server.fastLatency;

    const ServerEvent* outage = m_server.outageAt(m_now);
    if (outage && (outage->outageFraction >= 1 || m_rng.chance(outage->outageFraction))) {
      const Kind kind = outage->outageConnectionError ? Kind::ConnectionError : Kind::Outage503;
      ++(kind == Kind::Outage503 ? m_result.status503 : m_result.connectionErrors);
      answer(id, o.attempt, m_now + fast, kind, m_server.retryAfter503At(m_now), limit);
      return;
    }
    if (m_rng.chance(m_cfg.server.connectionErrorRate)) {
      ++m_result.connectionErrors;
      answer(id, o.attempt, m_now + fast, Kind::ConnectionError, -1, limit);
      return;
    }
    ++m_inFlight;
    const Usec begin = m_server.admit(m_now);
    m_result.maxQueueWait = std::max(m_result.maxQueueWait, begin - m_now);
    if (begin == m_now) {
      start(id, o.attempt);
      return;
    }
    push(begin, EvType::Start, id, o.attempt);
    // The client gives up before the handler even starts: its timeout is certain now.
    if (limit <= begin) push(limit, EvType::Timeout, id, o.attempt);
  }

  /// Schedules an answer, and the client's timeout if the answer would come too late.
  void answer(std::uint32_t id, std::uint16_t attempt, Usec at, Kind kind, Usec retryAfter, Usec limit) {
    push(at, EvType::Done, id, attempt, kind, retryAfter);
    if (limit < at && limit > m_now) push(limit, EvType::Timeout, id, attempt);
  }

  bool waitingFor(const Op& o, std::uint16_t attempt) const {
    return o.client == ClientState::Waiting && o.attempt == attempt;
  }

  void timeout(std::uint32_t id, std::uint16_t attempt) {
    Op& o = m_ops[id];
    if (!waitingFor(o, attempt)) return;
    ++m_result.timeouts;
    ++row().timeouts;
    failed(o, id, kTimeout, -1);
  }

  void succeeded(Op& o) {
    o.client = ClientState::Finished;
    ++m_result.successes;
    ++row().successes;
    budgetOf(o).onSuccess(o.lastRetryCost);
  }

  void failed(Op& o, std::uint32_t id, Outcome outcome, Usec retryAfter) {
    o.client = ClientState::Finished;
    if ((m_p.retryOn & outcome) == 0) {
      ++m_result.failures.notRetryable;
      return;
    }
    budgetOf(o).onQualifiedFailure();
    if (o.attempt >= m_p.maxAttempts) {
      ++m_result.failures.retriesExhausted;
      return;
    }
    if (retryAfter >= 0 && givesUpOn(m_p, retryAfter)) {
      ++m_result.failures.notRetryable;
      return;
    }
    const Usec backoff = backoffDelay(m_p, o.attempt, o.backoff, m_rng);
    const auto honoured = retryAfter >= 0 ? honouredRetryAfter(m_p, retryAfter) : std::nullopt;
    const Usec at = m_now + combineWithRetryAfter(m_p, backoff, honoured);
    if (m_p.deadline && at >= o.t0 + *m_p.deadline) {
      ++m_result.failures.deadline;
      return;
    }
    double cost = 0;
    if (!budgetOf(o).tryAcquire(m_now, outcome == kTimeout, &cost)) {
      ++m_result.failures.budget;
      return;
    }
    if (m_p.budget.type == Budget::Type::TokenBucket && m_p.budget.style == Budget::Style::Aws)
      o.lastRetryCost = static_cast<float>(cost);
    o.client = ClientState::Sleeping;
    push(at, EvType::Send, id, o.attempt);
  }

  // ---- server ------------------------------------------------------------------------
  /// The handler runs: the key store decides replay, 409 or execution.
  void start(std::uint32_t id, std::uint16_t attempt) {
    Op& o = m_ops[id];
    const Usec fast = m_cfg.server.fastLatency;
    bool present = o.storedAt >= 0 && m_now < o.storedAt + m_ttlPlusLag;
    if (!present && o.storedAt >= 0) {  // the sweeper purged it
      o.storedAt = -1;
      o.key = KeyState::None;
      o.purged = true;
    }
    Kind kind = Kind::Executed;
    Usec at = 0;
    Usec retryAfter = -1;
    const bool leaseHeld = !m_cfg.store.lease || m_now < o.leaseUntil;
    if (present && o.key == KeyState::Done) {
      kind = Kind::Replay;
      ++m_result.replays;
      at = m_now + fast;
    } else if (present && o.key == KeyState::Processing && leaseHeld) {
      kind = Kind::Conflict;
      ++m_result.conflicts409;
      retryAfter = m_cfg.server.conflictRetryAfter;
      at = m_now + fast;
    } else if (m_rng.chance(m_server.failureRateAt(m_now))) {
      // Fails before execution starts: nothing is stored (docs/design.md §2 caching rule).
      if (m_cfg.server.failureStatus == 503) {
        kind = Kind::Fail503;
        ++m_result.status503;
        retryAfter = m_server.retryAfter503At(m_now);
      } else {
        kind = Kind::Fail500;
        ++m_result.status500;
      }
      at = m_now + fast;
    } else {
      execute(o, present);
      at = m_now + m_server.executionLatency(m_rng);
      if (m_rng.chance(m_cfg.server.lostResponseRate)) {
        kind = Kind::ExecutedLost;
        ++m_result.lostResponses;
        ++m_result.connectionErrors;
      }
    }
    push(at, EvType::Done, id, attempt, kind, retryAfter);
    if (waitingFor(o, attempt)) {
      const Usec limit = waitLimit(o);
      if (limit < at && limit > m_now) push(limit, EvType::Timeout, id, attempt);
    }
  }

  void execute(Op& o, bool keyPresent) {
    ++m_result.executions;
    if (o.executed) {
      ++m_result.duplicates;
      if (keyPresent) {
        ++m_result.duplicatesLeaseTakeover;
      } else if (o.purged) {
        ++m_result.duplicatesAfterPurge;
      } else {
        ++m_result.duplicatesConcurrent;
      }
    }
    o.executed = true;
    if (m_cfg.store.storedAt == Store::StoredAt::FirstReceipt) {
      if (!keyPresent) {
        o.storedAt = m_now;
        o.key = KeyState::Processing;
      }
      if (m_cfg.store.lease) o.leaseUntil = m_now + *m_cfg.store.lease;
    }
  }

  void done(const Event& ev) {
    Op& o = m_ops[ev.id];
    if (ev.kind != Kind::Outage503 && ev.kind != Kind::ConnectionError) --m_inFlight;
    if (ev.kind == Kind::Executed || ev.kind == Kind::ExecutedLost) {
      o.key = KeyState::Done;
      if (o.storedAt < 0) o.storedAt = m_now;  // stored at completion (or re-stored after a purge)
    }
    if (!waitingFor(o, ev.attempt)) return;
    switch (ev.kind) {
      case Kind::Executed:
      case Kind::Replay:
        succeeded(o);
        break;
      case Kind::Conflict:
        failed(o, ev.id, kConflict409, ev.retryAfter);
        break;
      case Kind::Fail500:
        failed(o, ev.id, kStatus500, -1);
        break;
      case Kind::Fail503:
      case Kind::Outage503:
        failed(o, ev.id, kStatus503, ev.retryAfter);
        break;
      case Kind::ExecutedLost:
      case Kind::ConnectionError:
        failed(o, ev.id, kConnectionError, -1);
        break;
    }
  }

  // ---- series ------------------------------------------------------------------------
  SeriesRow& row() { return m_result.series[static_cast<std::size_t>(m_second)]; }

  /// Closes every second before `now`'s: in-flight and queue wait are sampled at its end.
  void advanceSeries(Usec now) {
    const std::int64_t second = now / kUsecPerSecond;
    if (m_result.series.empty()) m_result.series.emplace_back();
    while (m_second < second) {
      auto& r = m_result.series[static_cast<std::size_t>(m_second)];
      r.inFlight = m_inFlight;
      r.queueWaitS = toSeconds(m_server.queueWait((m_second + 1) * kUsecPerSecond));
      ++m_second;
      m_result.series.emplace_back();
    }
  }

  void finish() {
    if (!m_result.series.empty()) {
      auto& r = m_result.series.back();
      r.inFlight = m_inFlight;
      r.queueWaitS = toSeconds(m_server.queueWait(m_now));
    }
    m_result.simulatedUntil = m_now;
    m_result.horizon = retryHorizon(m_p);
    for (std::size_t a = 2; a < m_offsets.size(); ++a)
      m_result.offsets.push_back(summarizeOffsets(static_cast<int>(a), m_offsets[a]));
    double lastEventEnd = -1;
    for (const auto& e : m_cfg.server.events) lastEventEnd = std::max(lastEventEnd, toSeconds(e.at + e.duration));
    if (lastEventEnd >= 0)
      m_result.recovery = judgeRecovery(m_result.series, lastEventEnd, m_lastBaseArrival / kUsecPerSecond);
  }

  const SimConfig& m_cfg;
  const Policy& m_p;
  const RunControl& m_control;
  Rng m_rng;
  ServerModel m_server;
  std::vector<RetryBudget> m_budgets;  // one per client object
  std::uint64_t m_arrivals = 0;        // operations created, for handing out client objects
  RetryBudget& budgetOf(const Op& o) { return m_budgets[o.clientObject]; }
  Result m_result;
  QuaternaryHeap<Event, Earlier> m_queue;
  std::vector<Op> m_ops;
  std::vector<std::uint32_t> m_free;  // slots of finished operations
  std::vector<ArrivalStream> m_streams;
  std::vector<std::vector<double>> m_offsets;  // by attempt number
  Usec m_now = 0;
  Usec m_ttlPlusLag = 0;
  Usec m_lastBaseArrival = 0;
  std::uint64_t m_seq = 0;
  std::int64_t m_inFlight = 0;
  std::int64_t m_second = 0;
};

}  // namespace

Result simulate(const SimConfig& config, const RunControl& control) {
  Engine engine(config, control);
  return engine.run();
}

}  // namespace idem::sim
