#pragma once
// Framework-agnostic enforcement of Idempotency-Key semantics (docs/design.md §2):
//   auto d = enforcer.begin(request);                                   // after authorising it
//   if (d.kind == Decision::Kind::Respond) send(d.response);            // replay, 400/409/422/503
//   else if (d.kind == Decision::Kind::Bypass) send(handler(request));  // route not enforced
//   else send(enforcer.complete(*d.ticket, handler(request)));          // or release() on a
//                                                                        // failure before execution
// A ticket dropped without either ends itself (see Ticket).
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/enforce/completionbacklog.h"
#include "core/enforce/conflictwaits.h"
#include "core/enforce/durabilitygate.h"
#include "core/enforce/leasekeeper.h"
#include "core/enforce/policysnapshot.h"
#include "core/enforce/problem.h"
#include "core/enforce/replaycache.h"
#include "core/policy/policy.h"
#include "core/store/keystore.h"
#include "core/trace/tracewriter.h"

namespace idem::enforce {

struct Request {
  std::string method;
  std::string path;  // as received (any spelling); matched after normalisation
  http::Headers headers;
  std::string body;
  std::string requestId;  // empty: one is generated
  /// The tenant the caller authenticated. Never read from a header here: a client could send
  /// any. Absent: the policy decides (tenant_required → 400, else its default_tenant).
  std::optional<std::string> tenant;
};

class Enforcer;

/// The right to execute one request under one key. Move-only; complete() or release() it.
/// A ticket destroyed while open (an exception between begin() and complete()) ends itself:
/// under `after-start` the execution may have begun, so a 500 problem is stored and retries
/// replay it; under `2xx-only` the claim is released. The enforcer must outlive its tickets.
class Ticket {
 public:
  Ticket(Ticket&& other) noexcept;
  Ticket& operator=(Ticket&& other) noexcept;
  Ticket(const Ticket&) = delete;
  Ticket& operator=(const Ticket&) = delete;
  ~Ticket();

  [[nodiscard]] const store::Scope& scope() const { return m_scope; }
  [[nodiscard]] int generation() const { return m_generation; }
  [[nodiscard]] bool afterExpiry() const { return m_afterExpiry; }
  [[nodiscard]] bool takenOver() const { return m_takeover; }
  [[nodiscard]] const policy::Tier& tier() const { return *m_tier; }
  /// The policy the request began under: it stays with the ticket whatever a reload swaps in.
  [[nodiscard]] const PolicySnapshot& policy() const { return *m_policy; }
  [[nodiscard]] const std::string& requestId() const { return m_requestId; }
  [[nodiscard]] long long expiresAtMs() const { return m_expiresAt; }
  [[nodiscard]] bool open() const { return m_open; }

  /// How the ticket ended, for logs and metrics (the trace records it by itself).
  enum class End {
    Open,        // not ended yet
    Stored,      // the response is the key's: retries replay it
    Pending,     // the store refused the record for now: the completion backlog stores it when it returns
    Unrecorded,  // the store failed and the backlog was full; the answer was passed on, the key stays processing
    LeaseLost,   // a retry took the lease over: this response is not the key's
    OutcomeUnknown,  // every commit of the side statements failed: committed or rolled back, unknown (503)
    Released,    // nothing stored; the key is free again
  };
  [[nodiscard]] End end() const { return m_end; }

 private:
  friend class Enforcer;
  Ticket() = default;
  void abandon() noexcept;

  Enforcer* m_owner = nullptr;
  store::Scope m_scope;
  std::string m_leaseToken;
  std::string m_requestId;
  std::string m_fingerprint;
  PolicyPtr m_policy;                    // holds what m_tier points into
  const policy::Tier* m_tier = nullptr;
  int m_generation = 0;
  bool m_afterExpiry = false;
  bool m_takeover = false;
  long long m_expiresAt = 0;
  std::chrono::steady_clock::time_point m_started;
  bool m_open = true;
  bool m_abandoned = false;
  End m_end = End::Open;
};

struct Decision {
  enum class Kind {
    Execute,  // run the handler, then complete() or release() the ticket
    Respond,  // send `response` as is (replay, problem)
    Bypass,   // no enforcement on this route: run the handler plainly
    Wait,     // the key's original still runs and the tier waits for it: ask again at `retryAt`
  };
  Kind kind = Kind::Bypass;
  /// Wait: when to call begin() again with the same ConflictWait.
  std::chrono::steady_clock::time_point retryAt{};
  std::optional<Ticket> ticket;
  Response response;
  // For logs and metrics: a trace outcome's name (trace::sqlName: executed, replayed, conflict,
  // ...) when the store decided, else why the request never reached it (key_missing,
  // key_malformed, tenant_missing, body_invalid, unavailable, ...; nothing is traced then).
  std::string outcome;
  std::string tier;     // empty when no tier covers the route
  std::string route;    // the policy's route the request matched ("POST /v1/orders/{id}"); empty when none
  std::string detail;   // for the operator's log only (e.g. the store's error); never sent
  /// The tier is in `observe` (docs/policy.md, "Rollout") and enforcement decided to answer
  /// (`outcome`: key_missing, replayed, conflict, mismatch, ...): kind is Bypass instead, and the
  /// decision not enforced is already in the trace. Run the handler plainly.
  bool observed = false;
  /// The request matched another key's execution of the same request (the tier's cross_key,
  /// docs/policy.md "Duplicates across keys"): the tier's mode ("observe", "hold", "reject"), for
  /// idem_suspected_duplicates_total; empty when it matched nothing.
  std::string crossKeyMode;
  /// A replay's share of the replay budget (store/replaybodies.h): keep it until `response` is
  /// sent (the gate hands it to the transport, which drops it once the answer is written).
  std::shared_ptr<const void> bodyHold;
};

struct CompleteOptions {
  std::optional<std::string> resourceRef;             // e.g. "pay_123", so support can search by it
  std::vector<store::SideStatement> sameTransaction;  // committed with the key or not at all
  /// The executor cannot tell whether the work took effect (an upstream that took the request
  /// and never answered): the response is stored whatever the tier's cache rule, since
  /// releasing the key would let a retry run the work a second time; traced as outcome_unknown.
  bool outcomeUnknown = false;
  /// With outcomeUnknown: nothing ran here — the key was taken over from a holder that stopped and
  /// the tier's on_takeover stores "outcome unknown" for that holder's request (traced so).
  bool notRunAfterTakeover = false;
};

/// How long complete() keeps trying to record a response when the store fails after the work
/// ran. Attempts back off from `firstBackoff`, doubling up to `maxBackoff`, for at most `total`;
/// the key's lease is renewed while it lasts, so no retry takes the key over meanwhile.
struct CompletionRetry {
  std::chrono::milliseconds total{10'000};
  std::chrono::milliseconds firstBackoff{25};
  std::chrono::milliseconds maxBackoff{1'000};
};

class Enforcer {
 public:
  static constexpr const char* kKeyHeader = "Idempotency-Key";
  static constexpr const char* kExpiresHeader = "Idempotency-Expires";
  static constexpr const char* kReplayedHeader = "Idempotent-Replayed";

  /// Keys are claimed in the trace writer's service (TraceWriter::Options::service): the keys
  /// and the trace rows of one enforcer always name the same service. The policy is copied into
  /// the first snapshot in force (replacePolicy() swaps it).
  Enforcer(const policy::Policy& policy, int policyVersion, store::KeyStore& store, trace::TraceWriter& trace);
  Enforcer(PolicyPtr policy, store::KeyStore& store, trace::TraceWriter& trace);

  /// Where the enforcer reports what the operator must know (a completion it could not record,
  /// an abandoned ticket). Default: standard error.
  using Log = std::function<void(const std::string&)>;
  void setLog(Log log) { m_log = std::move(log); }
  void setCompletionRetry(CompletionRetry r) { m_retry = r; }
  /// Replays answered from memory within the options' bounds (ReplayCache); off by default.
  /// Set it before the first request.
  void setReplayCache(ReplayCacheOptions options) { m_replays = std::make_unique<ReplayCache>(options); }
  [[nodiscard]] const ReplayCache& replays() const { return *m_replays; }

  /// Decides what to do with a request under the policy in force. Never throws for store
  /// trouble: answers 503. On a tier with on_conflict "wait:<d>" it may keep the calling
  /// thread until the key's original finishes (a server calls the ConflictWait form instead).
  [[nodiscard]] Decision begin(const Request& request) { return begin(request, m_inForce.current()); }
  /// The same under a snapshot the caller took at the request's start (a server that read the
  /// policy already, for the tenant and the pages): its ticket keeps that snapshot.
  [[nodiscard]] Decision begin(const Request& request, const PolicyPtr& policy);
  /// begin() that never sleeps: where the tier would wait for the key's original, the decision
  /// is Kind::Wait, and the caller asks again at its `retryAt` with the same `wait` (a timer,
  /// not a thread). The wait's place among the bounded waiters is kept in `wait` meanwhile.
  [[nodiscard]] Decision begin(const Request& request, const PolicyPtr& policy, ConflictWait& wait);

  /// begin() for a caller that parks no thread on the store (a server on an event loop), where a
  /// statement sent without waiting can decide: a key on an enforcing tier that this process
  /// takes for new, with the store's write path for such callers set
  /// (KeyStore::setWritesWithoutWaiting). false: nothing was done; call begin(). true: `done` runs
  /// once — at once for what is decided without the store, else on the write path's strand —
  /// with the decision, or nullopt: call begin() with the same `wait`, which then decides the key
  /// (its fresh claim claimed nothing, or failed).
  using DecidedWithoutWaiting = std::function<void(std::optional<Decision>)>;
  [[nodiscard]] bool beginWithoutWaiting(const Request& request, const PolicyPtr& policy, ConflictWait& wait,
                                         const DecidedWithoutWaiting& done);
  /// complete() for a caller that parks no thread, where one statement sent without waiting can
  /// store the response: no side statements, an answer the tier stores, the write path set.
  /// false: nothing was done (`response` untouched); call complete(). true: `response` was taken,
  /// and `done` runs once on the write path's strand: `stored` with what to send (the ticket
  /// ended Stored), or not, with the response handed back: call complete() with it and the same
  /// ticket and options (a lost lease, a store failure: its retries and backlog decide).
  using CompletedWithoutWaiting = std::function<void(bool stored, Response response)>;
  [[nodiscard]] bool completeWithoutWaiting(Ticket& ticket, Response&& response, const CompleteOptions& options,
                                            const CompletedWithoutWaiting& done);

  /// A done key's answer the replay cache holds for this request (same scope and payload, within
  /// the cache's bounds), found without the store and without blocking, so an event loop may
  /// look. Nothing is recorded until replayFromMemory() answers it.
  struct MemoryHit {
    PolicyPtr policy;  // holds what `tier` points into
    const policy::Tier* tier = nullptr;
    std::string route;
    store::Scope scope;
    std::string fingerprint;
    ReplayCache::Hit hit;
    std::chrono::steady_clock::time_point started;
    std::string requestId;
  };
  /// nullopt: only begin() can decide this request (no tier, no key, a refusal, observe, a tier
  /// that asks for durability, a completion waiting in the backlog, no entry).
  [[nodiscard]] std::optional<MemoryHit> findInMemory(const Request& request, const PolicyPtr& policy);
  /// The hit's replay, traced as any replay (the trace writer queues; it never blocks).
  [[nodiscard]] Decision replayFromMemory(const MemoryHit& hit);

  /// How many requests may wait for their key's original (ConflictWaits); beyond it a retry
  /// is answered 409 at once. Thread-safe.
  void setConflictWaitBounds(ConflictWaitBounds bounds) { m_waits.setBounds(bounds); }
  [[nodiscard]] const ConflictWaits& conflictWaits() const { return m_waits; }

  /// Stores the handler's response per the tier's cache rule and returns what to send: the
  /// response plus the key echo and the expiry header. A store failure is retried (see
  /// CompletionRetry); one that outlasts the retries moves to the backlog, which stores it when
  /// the store returns and answers retries in this process meanwhile (logged, never hidden). A
  /// lost lease turns into a 409 (the side effects did not commit); a store failure while
  /// committing side statements into a 503 that says the outcome is unknown.
  [[nodiscard]] Response complete(Ticket& ticket, Response response, const CompleteOptions& options = {});

  /// The handler failed before execution started (validation, auth, rate limit): nothing is
  /// stored and a retry runs normally. Returns the response with the key echo added. Never
  /// throws for store trouble (the key then stays processing until its lease ends).
  Response release(Ticket& ticket, Response response, const std::string& reason);

  /// The key echo (an sf-string) and, when known, Idempotency-Expires: every keyed answer says
  /// them, including one a caller builds while the key stays with its ticket.
  void addKeyHeaders(Response& r, const std::string& key, std::optional<long long> expiresAtMs) const;

  /// The policy in force: requests that begin from now on take it.
  [[nodiscard]] PolicyPtr policy() const { return m_inForce.current(); }
  /// Swaps the policy in force (a reload). Requests already begun keep theirs; so do their
  /// tickets, to the end. Thread-safe.
  void replacePolicy(PolicyPtr next) { m_inForce.replace(std::move(next)); }
  /// Renews the leases of executions this enforcer started while they run.
  [[nodiscard]] LeaseKeeper& leases() { return m_leases; }
  [[nodiscard]] const LeaseKeeper& leases() const { return m_leases; }
  /// Responses whose work ran while the store refused their record, waiting for it to return.
  [[nodiscard]] const CompletionBacklog& backlog() const { return m_backlog; }
  /// The tiers' durability settings against the store's replication (durabilitygate.h).
  [[nodiscard]] DurabilityGate& durability() { return m_durability; }

 private:
  friend class Ticket;
  using Clock = std::chrono::steady_clock;
  void abandon(Ticket& ticket) noexcept;
  /// The store's completion, retried with backoff while the lease is kept alive. Empty when
  /// every attempt failed; `failure` then says why. Rethrows what retrying cannot help.
  std::optional<store::CompleteResult> completeWithRetry(const store::CompleteRequest& q,
                                                         const CompleteOptions& options, int& attempts,
                                                         std::string& failure);
  /// begin() without the rollout: what enforcement decides for the request.
  Decision decide(const Request& request, const PolicyPtr& policy, const policy::Policy::Match& match,
                  ConflictWait& wait);
  /// A keyed request ready for the store: its claim, when it began, and the completion of it
  /// waiting in the backlog, if any.
  struct Claim {
    store::ClaimRequest request;
    Clock::time_point started;
    std::optional<PendingCompletion> pending;
    bool ready = false;  // prepared to the end (not left at its scope: see prepare())
  };
  /// decide()'s first part, for a request on a tier: what is decided without the store (a
  /// refusal, a replay from memory), or nullopt and `claim` to send. `withoutWaiting`: stop once
  /// the key's scope says the store would not take its claim without waiting (claim.ready stays
  /// false), before its fingerprint is computed — begin() then computes it once.
  std::optional<Decision> prepare(const Request& request, const PolicyPtr& policy, const policy::Policy::Match& match,
                                  const ConflictWait& wait, Claim& claim, bool withoutWaiting = false);
  /// decide()'s last part: the store's answer to the claim as the decision, traced.
  Decision conclude(const Claim& claim, const PolicyPtr& policy, const policy::Policy::Match& match,
                    store::ClaimResult result, const std::string& notWaited, Clock::time_point sentAt);
  /// What complete() does once the store took the response: the ticket ends Stored, the lease
  /// goes, the execution is traced; returns what to send.
  Response stored(Ticket& ticket, Response response, const PendingCompletion& execution,
                  const store::CompleteResult& done, int attempts, const std::string& failure);
  /// The execution a completion records (its trace row, or the backlog's entry).
  static PendingCompletion executionOf(const Ticket& ticket, store::CompleteRequest request,
                                       const CompleteOptions& options);
  /// The completion request for a ticket's response (the headers a replay may carry).
  store::CompleteRequest completionOf(const Ticket& ticket, const Response& response,
                                      const CompleteOptions& options) const;
  /// A keyed request on a tier: its key's scope, or what was decided before it has one (a
  /// refusal for its key or tenant; a bypass under rollout when-present).
  struct Scoped {
    std::optional<Decision> decided;
    store::Scope scope;
  };
  Scoped scopeOf(const Request& request, const policy::Policy& policy, const policy::Tier& tier,
                 std::string_view route) const;
  /// The request's fingerprint under its tier (its path too on a template route), or the 400
  /// for a body that cannot be read.
  struct Fingerprinted {
    std::optional<Decision> refused;
    std::string fingerprint;
  };
  Fingerprinted fingerprintOf(const Request& request, const policy::Policy::Match& match, const std::string& docs,
                              const std::string& key) const;
  /// A replay cache hit, answered and traced (503 when the replay budget has no room).
  Decision replayHit(const store::Scope& scope, const policy::Tier& tier, const ReplayCache::Hit& hit,
                     const std::string& fingerprint, std::chrono::steady_clock::time_point started,
                     const std::string& requestId, const std::string& docsUrl);
  /// A tier in observe: the answer is not sent and the request runs; the decision is traced.
  Decision observe(Decision d, const Request& request, const policy::Policy& policy,
                   const policy::Policy::Match& match, std::chrono::steady_clock::time_point started);
  static Response storeTrouble(const std::string& docsUrl, const std::string& key, std::string_view what);
  /// Gives the claim back in the store; a store failure is logged (the lease then runs out).
  void freeKey(const Ticket& ticket, int status, const std::string& reason);
  Decision respond(Response r, std::string outcome, const std::string& tier) const;
  void trace(const store::Scope& scope, const policy::Tier& tier, const store::ClaimResult& claim,
             trace::Outcome outcome, const std::string& fingerprint, int status, double latencyMs,
             const std::string& requestId, std::string_view detail, std::string_view relatedKey = {});
  /// A claim that matched another key's execution (cross_key): its event names both keys.
  /// Returns the tier's mode name for the metric.
  std::string traceMatch(const store::Scope& scope, const policy::Tier& tier, const store::ClaimResult& claim,
                         const store::CrossKeyCheck& check, const std::string& fingerprint, int status,
                         double latencyMs, const std::string& requestId);
  /// The execution's row, queued once its key says done (after the commit, never before).
  void traceExecution(const PendingCompletion& execution, const store::CompleteResult& done, const std::string& note);
  /// The replay of a done key's stored answer (from the store's read or from memory), traced.
  /// `stored` is taken by value: a body read from the store is moved into the answer, not copied.
  /// Its bytes are held in the replay budget (the store's hold for a large body, else taken
  /// here) until the client has the answer; 503 when full.
  Decision replay(const store::Scope& scope, const policy::Tier& tier, const store::ClaimResult& decided,
                  store::StoredResponse stored, const std::string& fingerprint,
                  std::chrono::steady_clock::time_point started, const std::string& requestId,
                  const std::string& docsUrl);
  /// 503 + Retry-After: the replay budget (store/replaybodies.h) has no room for this answer now.
  Decision replayBusy(const std::string& docsUrl, const std::string& key, const std::string& tier) const;
  /// A retry of a key whose record waits in the backlog: its replay (or a payload mismatch).
  store::ClaimResult fromBacklog(const PendingCompletion& pending, const std::string& fingerprint) const;

  PolicyInForce m_inForce;
  store::KeyStore& m_store;
  trace::TraceWriter& m_trace;
  LeaseKeeper m_leases{m_store};
  Log m_log;
  CompletionRetry m_retry;
  std::unique_ptr<ReplayCache> m_replays = std::make_unique<ReplayCache>();
  ConflictWaits m_waits;
  // After m_leases and m_log, so it stops (and logs what it could not store) before they go.
  CompletionBacklog m_backlog;
  DurabilityGate m_durability{m_store.pool(), m_log};
};

}  // namespace idem::enforce
