// Discrete-event engine. One priority queue of events ordered by (time, sequence number), so
// ties are broken the same way on every platform; one random stream consumed in event order.
#include "core/sim/engine.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/sim/backoff.h"
#include "core/sim/budget.h"
#include "core/sim/engine_state.h"
#include "core/sim/event_queue.h"
#include "core/sim/horizon.h"
#include "core/sim/rng.h"
#include "core/sim/server.h"
#include "core/sim/stats.h"

namespace idem::sim {

namespace {

using namespace engine_detail;

class Engine final {
 public:
  Engine(const SimConfig& config, const RunControl& control)
      : m_cfg(config),
        m_p(m_cfg.policy),
        m_mesh(m_cfg.intermediary),
        m_cross(m_cfg.store.crossKey),
        m_control(control),
        m_rng(config.seed),
        m_server(config.server),
        m_budgets(static_cast<std::size_t>(std::max<std::int64_t>(1, config.clients.clientObjects)),
                  RetryBudget(config.policy.budget)),
        m_meshBudget(config.intermediary.retry.budget) {
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
  void push(Usec t, EvType type, std::uint32_t id, std::uint16_t attempt, std::uint16_t keyGen = 0,
            Kind kind = Kind::Executed, Usec retryAfter = -1) {
    if (type != EvType::Arrival) ++m_ops[id].pending;
    m_queue.push(Event{t, m_seq++, retryAfter, id, attempt, keyGen, type, kind});
  }

  /// An event of operation id was handled. Once the client is done and no event names the
  /// operation any more, nothing can reach its keys again: its slot is reused, so memory
  /// follows the operations in progress, not all operations.
  void release(std::uint32_t id) {
    Op& o = m_ops[id];
    if (--o.pending != 0 || o.client != ClientState::Finished) return;
    // Meant to run twice, and detection kept it from running at all.
    if (o.twinExecAt >= 0 && o.matched && !o.executed) ++m_result.crossKey.legitimateRefused;
    m_free.push_back(id);
  }

  void dispatch(const Event& ev) {
    switch (ev.type) {
      case EvType::Arrival:
        onArrival(ev.id);
        break;
      case EvType::Send:
        send(ev.id);
        break;
      case EvType::Hedge:
        hedge(ev.id, ev.attempt);
        break;
      case EvType::Retry:
        meshRetry(ev);
        break;
      case EvType::Start:
        start(ev.id, ev.attempt, ev.keyGen);
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
    Op& o = m_ops[id];
    o.clientObject = static_cast<std::uint32_t>(m_arrivals++ % m_budgets.size());
    // The same request as the one that ran last, on purpose (the same charge twice).
    if (m_rng.chance(m_cfg.clients.sameBodyShare)) o.twinExecAt = m_lastExecAt;
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

  /// The client sends its next attempt (under a new key, with new_key_on_retry's chance).
  void send(std::uint32_t id) {
    Op& o = m_ops[id];
    ++o.attempt;
    o.sentAt = m_now;
    o.client = ClientState::Waiting;
    o.meshTries = 0;
    o.copiesSent = 1;
    o.copiesOut = 1;
    countAttempt();
    if (o.attempt == 1) {
      o.t0 = m_now;
      budgetOf(o).onFirstAttempt(m_now);
    } else {
      ++row().retries;
      m_offsets[o.attempt].push_back(toSeconds(m_now - o.t0));
      if (o.keyGen < std::numeric_limits<std::uint16_t>::max() && m_rng.chance(m_cfg.clients.newKeyOnRetry)) {
        o.retired.push_back(o.key);
        o.key = KeyRecord{};
        ++o.keyGen;
        ++m_result.newKeyRetries;
      }
    }
    transmit(id, o.attempt, o.keyGen);
    if (m_cfg.hedging.enabled && m_cfg.hedging.maxCopies > 1)
      push(m_now + m_cfg.hedging.delay, EvType::Hedge, id, o.attempt, o.keyGen);
  }

  void countAttempt() {
    ++m_result.attempts;
    ++row().attempts;
  }

  /// Another copy of the attempt the client still waits for (hedging).
  void hedge(std::uint32_t id, std::uint16_t attempt) {
    Op& o = m_ops[id];
    if (!waitingFor(o, attempt) || o.copiesSent >= m_cfg.hedging.maxCopies) return;
    ++o.copiesSent;
    ++o.copiesOut;
    ++m_result.hedgedCopies;
    countAttempt();
    transmit(id, attempt, o.keyGen);
    if (o.copiesSent < m_cfg.hedging.maxCopies) push(m_now + m_cfg.hedging.delay, EvType::Hedge, id, attempt, o.keyGen);
  }

  /// The intermediary sends the same request again (same key) while the client waits.
  void meshRetry(const Event& ev) {
    if (!waitingFor(m_ops[ev.id], ev.attempt)) return;  // the client hung up: the mesh stops too
    ++m_result.intermediaryRetries;
    countAttempt();
    transmit(ev.id, ev.attempt, ev.keyGen);
  }

  /// One request of an attempt goes over the network: an outage or a connection error answers
  /// at once, otherwise it joins the server's queue.
  void transmit(std::uint32_t id, std::uint16_t attempt, std::uint16_t keyGen) {
    const Usec limit = waitLimit(m_ops[id]);
    const Usec fast = m_cfg.server.fastLatency;
    const ServerEvent* outage = m_server.outageAt(m_now);
    if (outage && (outage->outageFraction >= 1 || m_rng.chance(outage->outageFraction))) {
      const Kind kind = outage->outageConnectionError ? Kind::ConnectionError : Kind::Outage503;
      ++(kind == Kind::Outage503 ? m_result.status503 : m_result.connectionErrors);
      answer(id, attempt, keyGen, m_now + fast, kind, m_server.retryAfter503At(m_now), limit);
      return;
    }
    if (m_rng.chance(m_cfg.server.connectionErrorRate)) {
      ++m_result.connectionErrors;
      answer(id, attempt, keyGen, m_now + fast, Kind::ConnectionError, -1, limit);
      return;
    }
    ++m_inFlight;
    const Usec begin = m_server.admit(m_now);
    m_result.maxQueueWait = std::max(m_result.maxQueueWait, begin - m_now);
    if (begin == m_now) {
      start(id, attempt, keyGen);
      return;
    }
    push(begin, EvType::Start, id, attempt, keyGen);
    // The client gives up before the handler even starts: its timeout is certain now.
    if (limit <= begin) push(limit, EvType::Timeout, id, attempt);
  }

  /// Schedules an answer, and the client's timeout if the answer would come too late.
  void answer(std::uint32_t id, std::uint16_t attempt, std::uint16_t keyGen, Usec at, Kind kind, Usec retryAfter,
              Usec limit) {
    push(at, EvType::Done, id, attempt, keyGen, kind, retryAfter);
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

  void failed(Op& o, std::uint32_t id, unsigned outcome, Usec retryAfter) {
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
  static KeyRecord& keyOf(Op& o, std::uint16_t gen) { return gen == o.keyGen ? o.key : o.retired[gen]; }

  /// Cross-key detection: would this key's first execution repeat an execution of the same
  /// request under another key inside the window? Legitimate: the repeat is meant.
  enum class Match : std::uint8_t { None, Duplicate, Legitimate };
  Match crossKeyMatch(const Op& o, std::uint16_t gen) const {
    if (m_cross.mode == CrossKey::Mode::Off) return Match::None;
    if (o.lastExecAt >= 0 && o.lastExecGen != gen && m_now - o.lastExecAt <= m_cross.window) return Match::Duplicate;
    if (o.twinExecAt >= 0 && m_now - o.twinExecAt <= m_cross.window) return Match::Legitimate;
    return Match::None;
  }

  /// The handler runs: the key store decides replay, 409, a cross-key hold or execution.
  void start(std::uint32_t id, std::uint16_t attempt, std::uint16_t gen) {
    Op& o = m_ops[id];
    KeyRecord& k = keyOf(o, gen);
    const Usec fast = m_cfg.server.fastLatency;
    const bool present = k.storedAt >= 0 && m_now < k.storedAt + m_ttlPlusLag;
    if (!present && k.storedAt >= 0) {  // the sweeper purged it
      k.storedAt = -1;
      k.state = KeyState::None;
      k.purged = true;
    }
    Kind kind = Kind::Executed;
    Usec at = m_now + fast;
    Usec retryAfter = -1;
    const bool leaseHeld = !m_cfg.store.lease || m_now < k.leaseUntil;
    const Match match = present ? Match::None : crossKeyMatch(o, gen);
    if (match != Match::None) {
      o.matched = true;
      ++m_result.crossKey.matches;
      if (match == Match::Legitimate) ++m_result.crossKey.legitimateMatches;
    }
    if (present && k.state == KeyState::Done) {
      kind = Kind::Replay;
      ++m_result.replays;
    } else if (present && k.state == KeyState::Processing && leaseHeld) {
      kind = Kind::Conflict;
      ++m_result.conflicts409;
      retryAfter = m_cfg.server.conflictRetryAfter;
    } else if (match != Match::None && m_cross.mode == CrossKey::Mode::Hold) {
      kind = Kind::Held;
      ++m_result.crossKey.held;
    } else if (match != Match::None && m_cross.mode == CrossKey::Mode::Reject) {
      kind = Kind::Rejected;
      ++m_result.crossKey.rejected;
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
    } else {
      execute(o, k, gen, present);
      at = m_now + m_server.executionLatency(m_rng);
      if (m_rng.chance(m_cfg.server.lostResponseRate)) {
        kind = Kind::ExecutedLost;
        ++m_result.lostResponses;
        ++m_result.connectionErrors;
      }
    }
    push(at, EvType::Done, id, attempt, gen, kind, retryAfter);
    if (waitingFor(o, attempt)) {
      const Usec limit = waitLimit(o);
      if (limit < at && limit > m_now) push(limit, EvType::Timeout, id, attempt);
    }
  }

  void execute(Op& o, KeyRecord& k, std::uint16_t gen, bool keyPresent) {
    ++m_result.executions;
    if (o.executed) {
      ++m_result.duplicates;
      if (!k.executed) {
        ++m_result.duplicatesNewKey;
      } else if (keyPresent) {
        ++m_result.duplicatesLeaseTakeover;
      } else if (k.purged) {
        ++m_result.duplicatesAfterPurge;
      } else {
        ++m_result.duplicatesConcurrent;
      }
    }
    o.executed = true;
    k.executed = true;
    o.lastExecAt = m_now;
    o.lastExecGen = gen;
    m_lastExecAt = m_now;
    if (m_cfg.store.storedAt == Store::StoredAt::FirstReceipt) {
      if (!keyPresent) {
        k.storedAt = m_now;
        k.state = KeyState::Processing;
      }
      if (m_cfg.store.lease) k.leaseUntil = m_now + *m_cfg.store.lease;
    }
  }

  /// Does the intermediary send this answer's request again instead of passing the answer on?
  bool meshRetries(Op& o, const Event& ev) {
    if (!m_mesh.enabled || (m_mesh.retry.retryOn & outcomeOf(ev.kind)) == 0) return false;
    if (o.meshTries + 1 >= m_mesh.retry.maxAttempts) return false;
    m_meshBudget.onQualifiedFailure();
    double cost = 0;
    if (!m_meshBudget.tryAcquire(m_now, false, &cost)) return false;
    ++o.meshTries;
    const Usec backoff = backoffDelay(m_mesh.retry, o.meshTries, o.meshBackoff, m_rng);
    const auto honoured = ev.retryAfter >= 0 ? honouredRetryAfter(m_mesh.retry, ev.retryAfter) : std::nullopt;
    push(m_now + combineWithRetryAfter(m_mesh.retry, backoff, honoured), EvType::Retry, ev.id, ev.attempt, ev.keyGen);
    return true;
  }

  void done(const Event& ev) {
    Op& o = m_ops[ev.id];
    if (ev.kind != Kind::Outage503 && ev.kind != Kind::ConnectionError) --m_inFlight;
    if (ev.kind == Kind::Executed || ev.kind == Kind::ExecutedLost) {
      KeyRecord& k = keyOf(o, ev.keyGen);
      k.state = KeyState::Done;
      if (k.storedAt < 0) k.storedAt = m_now;  // stored at completion (or re-stored after a purge)
    }
    if (!waitingFor(o, ev.attempt)) return;
    const unsigned outcome = outcomeOf(ev.kind);
    if (outcome != 0 && meshRetries(o, ev)) return;
    // Hedging: a failure the policy calls non-fatal waits for the copies still out.
    if (outcome != 0 && o.copiesOut > 1 && (m_cfg.hedging.nonFatal & outcome) != 0) {
      --o.copiesOut;
      return;
    }
    switch (ev.kind) {
      case Kind::Executed:
      case Kind::Replay:
        succeeded(o);
        break;
      case Kind::Rejected:  // a refusal no client retries: the operation ends
        o.client = ClientState::Finished;
        ++m_result.failures.notRetryable;
        break;
      case Kind::Held:
        failed(o, ev.id, outcome, -1);
        break;
      default:
        failed(o, ev.id, outcome, ev.retryAfter);
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
  const Intermediary& m_mesh;
  const CrossKey& m_cross;
  const RunControl& m_control;
  Rng m_rng;
  ServerModel m_server;
  std::vector<RetryBudget> m_budgets;  // one per client object
  RetryBudget m_meshBudget;            // the intermediary's, shared by all its traffic
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
  Usec m_lastExecAt = -1;  // latest execution of any operation
  std::uint64_t m_seq = 0;
  std::int64_t m_inFlight = 0;
  std::int64_t m_second = 0;
};

/// Does a report need the run with detection the other way round? Only when the scenario has
/// something detection could change.
bool wantsCounterpart(const SimConfig& c) {
  return c.store.crossKey.mode != CrossKey::Mode::Off || c.clients.newKeyOnRetry > 0;
}

}  // namespace

Result simulate(const SimConfig& config, const RunControl& control) {
  if (!wantsCounterpart(config)) return Engine(config, control).run();
  // Two runs: progress is reported as halves of one.
  RunControl half = control;
  if (control.onProgress) half.onProgress = [&control](double f) { control.onProgress(f / 2); };
  Result result = Engine(config, half).run();
  if (result.cancelled) return result;
  SimConfig other = config;
  const bool detecting = config.store.crossKey.mode == CrossKey::Mode::Hold ||
                         config.store.crossKey.mode == CrossKey::Mode::Reject;
  other.store.crossKey.mode = detecting ? CrossKey::Mode::Off : CrossKey::Mode::Hold;
  if (control.onProgress) half.onProgress = [&control](double f) { control.onProgress(0.5 + f / 2); };
  const Result twin = Engine(other, half).run();
  result.cancelled = twin.cancelled;
  result.counterpart = CrossKeyCounterpart{other.store.crossKey.mode, twin.duplicates, twin.duplicatesNewKey,
                                           twin.crossKey.legitimateRefused};
  return result;
}

}  // namespace idem::sim
