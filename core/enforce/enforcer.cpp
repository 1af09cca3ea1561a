#include "core/enforce/enforcer.h"

#include "core/enforce/crosskey.h"
#include "core/enforce/enforcer_support.h"

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "core/http/requestid.h"
#include "core/http/keyheader.h"
#include "core/policy/route.h"

namespace idem::enforce {
using detail::allowedOnReplay;
using detail::Clock;
using detail::describe;
using detail::msSince;

namespace {

// Retry-After for a 409: about when the lease holding the key ends (whole seconds, 1 to 5: the
// executor usually finishes sooner), and never past the Idempotency-Expires the same answer
// carries (an HTTP-date, so whole seconds rounded down): a client that obeys both finds the key,
// never a lapsed one and a second execution. The store keeps every lease a second inside the
// key's life, so the cap only bites when the lease is short.
std::string conflictRetryAfter(const store::ClaimResult& r) {
  long long seconds = std::clamp<long long>(r.retryAfterMs / 1000, 1, 5);
  if (r.expiresAt) seconds = std::min(seconds, std::max<long long>(0, (*r.expiresAt / 1000 * 1000 - r.now) / 1000));
  return std::to_string(seconds);
}

}  // namespace

Ticket::Ticket(Ticket&& other) noexcept { *this = std::move(other); }

Ticket& Ticket::operator=(Ticket&& other) noexcept {
  if (this == &other) return *this;
  abandon();  // an open ticket being overwritten is dropped on the floor too
  m_owner = other.m_owner;
  m_scope = std::move(other.m_scope);
  m_leaseToken = std::move(other.m_leaseToken);
  m_requestId = std::move(other.m_requestId);
  m_fingerprint = std::move(other.m_fingerprint);
  m_policy = std::move(other.m_policy);
  m_tier = other.m_tier;
  m_generation = other.m_generation;
  m_afterExpiry = other.m_afterExpiry;
  m_takeover = other.m_takeover;
  m_expiresAt = other.m_expiresAt;
  m_started = other.m_started;
  m_open = other.m_open;
  m_abandoned = other.m_abandoned;
  m_end = other.m_end;
  other.m_open = false;  // the moved-from ticket ends nothing
  return *this;
}

Ticket::~Ticket() { abandon(); }

void Ticket::abandon() noexcept {
  if (m_open && m_owner) m_owner->abandon(*this);
  m_open = false;
}

Enforcer::Enforcer(const policy::Policy& policy, int policyVersion, store::KeyStore& store,
                   trace::TraceWriter& trace)
    : Enforcer(makeSnapshot(policy, policyVersion), store, trace) {}

Enforcer::Enforcer(PolicyPtr policy, store::KeyStore& store, trace::TraceWriter& trace)
    : m_inForce(std::move(policy)),
      m_store(store),
      m_trace(trace),
      m_log([](const std::string& line) { std::cerr << "idem: " << line << std::endl; }),
      m_backlog(
          m_store, m_leases,
          [this](const PendingCompletion& p, const store::CompleteResult& done, const std::string& note) {
            m_log("completion of " + p.request.scope.endpoint + " key " + p.request.scope.key + " " + note);
            traceExecution(p, done, note);
          },
          [this](const std::string& line) { m_log(line); }) {}

Response Enforcer::storeTrouble(const std::string& docsUrl, const std::string& key, std::string_view what) {
  Response r = makeProblem(Problem::StoreUnavailable, docsUrl, what, key);
  r.headers.emplace_back("Retry-After", "2");
  return r;
}

void Enforcer::addKeyHeaders(Response& r, const std::string& key, std::optional<long long> expiresAtMs) const {
  if (auto quoted = http::serializeSfString(key)) r.headers.emplace_back(kKeyHeader, *quoted);
  if (expiresAtMs) r.headers.emplace_back(kExpiresHeader, httpDate(*expiresAtMs));
}

Decision Enforcer::respond(Response r, std::string outcome, const std::string& tier) const {
  Decision d;
  d.kind = Decision::Kind::Respond;
  d.response = std::move(r);
  d.outcome = std::move(outcome);
  d.tier = tier;
  return d;
}

void Enforcer::trace(const store::Scope& scope, const policy::Tier& tier, const store::ClaimResult& claim,
                     trace::Outcome outcome, const std::string& fingerprint, int status, double latencyMs,
                     const std::string& requestId, std::string_view detail, std::string_view relatedKey) {
  trace::Event e;
  e.atMs = claim.now;
  e.tenant = scope.tenant;
  e.endpoint = scope.endpoint;
  e.key = scope.key;
  e.generation = claim.generation;
  e.tier = tier.name;
  // Under observe the decision is recorded as the one that was not enforced.
  e.outcome = tier.observed() && trace::kind(outcome) != trace::OutcomeKind::CrossKey
                  ? trace::observedOutcome(trace::sqlName(outcome))
                  : outcome;
  e.fingerprint = fingerprint;
  e.status = status;
  e.latencyMs = latencyMs;
  e.requestId = requestId;
  e.detail = detail;
  e.relatedKey = relatedKey;
  m_trace.record(e);
}

std::string Enforcer::traceMatch(const store::Scope& scope, const policy::Tier& tier, const store::ClaimResult& claim,
                                 const store::CrossKeyCheck& check, const std::string& fingerprint, int status,
                                 double latencyMs, const std::string& requestId) {
  // Its own row, never an observed_* one: the match happened whatever the rollout.
  trace(scope, tier, claim, crossKeyOutcome(claim, check, tier.crossKey), fingerprint, status, latencyMs, requestId,
        matchDetail(*claim.match, claim.now, tier.crossKey), claim.match->key);
  return std::string(policy::crossKeyModeName(tier.crossKey.mode));
}

Decision Enforcer::begin(const Request& req, const PolicyPtr& policy) {
  ConflictWait wait;
  for (;;) {
    Decision d = begin(req, policy, wait);
    if (d.kind != Decision::Kind::Wait) return d;
    std::this_thread::sleep_until(d.retryAt);
  }
}

Decision Enforcer::begin(const Request& req, const PolicyPtr& policy, ConflictWait& wait) {
  if (!policy) throw std::invalid_argument("Enforcer::begin: no policy snapshot");
  const policy::Policy::Match match = policy->policy.match(req.method, req.path);
  Decision d = decide(req, policy, match, wait);
  d.route = std::string(match.route);
  if (d.kind != Decision::Kind::Wait) wait.slot.reset();  // decided: no longer a waiter
  // The rollout changes what is done with the decision, never the decision itself.
  if (match.tier != nullptr && match.tier->observed() && d.kind == Decision::Kind::Respond)
    return observe(std::move(d), req, policy->policy, match, wait.started);
  return d;
}

Decision Enforcer::observe(Decision d, const Request& req, const policy::Policy& policy,
                           const policy::Policy::Match& match, Clock::time_point started) {
  // The store's decisions (replay, 409, 422) were traced where they were made, under their
  // observed names (trace()); a refusal before the store has no key scope yet, so it is traced
  // here, with the key as sent (empty when none) and the status enforcement would have answered.
  if (!trace::parseOutcome(d.outcome)) {
    const auto rawKey = http::findHeader(req.headers, kKeyHeader);
    std::string key;
    if (rawKey) {
      const http::KeyParse parsed = http::parseIdempotencyKey(*rawKey);
      key = parsed.key ? *parsed.key : rawKey->substr(0, 256);
    }
    trace::Event e;
    e.atMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
    const std::string tenant = req.tenant.value_or(policy.defaultTenant);
    e.tenant = tenant;
    e.endpoint = match.route;
    e.key = key;
    e.tier = match.tier->name;
    e.outcome = trace::observedOutcome(d.outcome);
    e.status = d.response.status;
    e.latencyMs = msSince(started);
    e.requestId = req.requestId;
    if (e.outcome == trace::Outcome::ObservedRefused) e.detail = d.outcome;
    m_trace.record(e);
  }
  d.kind = Decision::Kind::Bypass;
  d.observed = true;
  d.response = Response{};
  return d;
}

Decision Enforcer::decide(const Request& req, const PolicyPtr& snapshot, const policy::Policy::Match& match,
                          ConflictWait& wait) {
  const Clock::time_point started = wait.started;
  const policy::Policy& policy = snapshot->policy;
  const std::string& docs = policy.docsUrl;
  const policy::Tier* tier = match.tier;
  const auto rawKey = http::findHeader(req.headers, kKeyHeader);
  if (!tier) {
    // Fail closed: a client that sent a key expects a retry not to run twice. On a route no
    // tier covers (another spelling this matcher does not know, a framework alias) that
    // promise cannot be kept, so the request is refused before anything runs.
    if (!rawKey || policy::isSafeMethod(req.method)) return Decision{};  // Bypass
    return respond(makeProblem(Problem::KeyNotHonoured, docs,
                               req.method + " on this path is not covered by the idempotency policy, so its "
                                            "Idempotency-Key cannot be honoured; nothing was executed. Send it to a "
                                            "route the published policy lists, or without the key."),
                   "key_not_honoured", "");
  }

  // A tier that needs synchronous durability runs only on a store that gives it (or warns).
  if (auto refused = m_durability.check(*tier, docs)) return respond(std::move(*refused), "durability_refused", tier->name);

  Claim c;
  if (auto decided = prepare(req, snapshot, match, wait, c)) return std::move(*decided);
  const auto waitUntil = started + tier->onConflict.waitFor;
  store::ClaimResult result;
  std::string notWaited;  // why a retry the tier would let wait was answered 409 at once
  int conflictsRetried = 0;
  if (c.pending) result = fromBacklog(*c.pending, c.request.fingerprint);
  auto sentAt = Clock::now();
  for (; !c.pending;) {
    try {
      sentAt = Clock::now();
      result = m_store.claim(c.request);
    } catch (const pg::Error& e) {
      // The claim's own serialization failure or deadlock: nothing committed, resending is safe.
      const auto* q = dynamic_cast<const pg::QueryError*>(&e);
      if (q && q->sqlstate().starts_with("40") && ++conflictsRetried <= 3) continue;
      // Whatever the store said (unreachable, read-only, timeout, out of resources, a bug),
      // nothing ran: 503 with Retry-After. Its words go to the operator's log, not the client.
      Decision d = respond(storeTrouble(docs, c.request.scope.key,
                                        "The idempotency store could not decide this request, so it was not "
                                        "executed. Retry with the same key later."),
                           "unavailable", tier->name);
      d.detail = describe(e);
      return d;
    }
    // on_conflict wait:<d>: ask again later until the original finishes, then replay it; the
    // caller waits on a timer (or begin() sleeps). Observe never makes a request wait for another.
    const auto now = Clock::now();
    if (result.decision != store::Decision::Conflict || !tier->onConflict.wait || tier->observed() ||
        now >= waitUntil || wait.lastLook)
      break;
    if (!wait.slot) wait.slot = m_waits.enter(ReplayCache::idOf(c.request.scope));
    if (!wait.slot) {
      notWaited = "not waited: as many requests as allowed wait already (for this key or in all)";
      break;
    }
    // 25 ms, doubling to 250 ms: a short original is replayed soon, a long one costs few reads.
    const auto poll = std::chrono::milliseconds(25 << std::min(wait.polls++, 3));
    Decision d;
    d.kind = Decision::Kind::Wait;
    d.tier = tier->name;
    d.retryAt = now + std::min<Clock::duration>(std::min<Clock::duration>(poll, std::chrono::milliseconds(250)),
                                                waitUntil - now);
    return d;
  }
  return conclude(c, snapshot, match, std::move(result), notWaited, sentAt);
}

std::optional<Decision> Enforcer::prepare(const Request& req, const PolicyPtr& snapshot,
                                          const policy::Policy::Match& match, const ConflictWait& wait, Claim& c,
                                          bool withoutWaiting) {
  const policy::Policy& policy = snapshot->policy;
  const std::string& docs = policy.docsUrl;
  const policy::Tier* tier = match.tier;
  Scoped scoped = scopeOf(req, policy, *tier, match.route);
  if (scoped.decided) return std::move(*scoped.decided);
  if (withoutWaiting && !m_store.claimsWithoutWaiting(scoped.scope)) return std::nullopt;
  const std::string& key = scoped.scope.key;
  Fingerprinted fingerprinted = fingerprintOf(req, match, docs, key);
  if (fingerprinted.refused) return std::move(*fingerprinted.refused);

  store::ClaimRequest& claim = c.request;
  claim.scope = scoped.scope;
  claim.fingerprint = std::move(fingerprinted.fingerprint);
  claim.tier = tier->name;
  claim.policyVersion = snapshot->version;  // the version that decided this key (explain names it)
  claim.ttl = tier->ttl;
  claim.lease = tier->lease;
  claim.rejectExpired = tier->onExpired == policy::OnExpired::Reject;
  claim.archiveRetention = tier->archiveRetention;
  claim.requestId = req.requestId.empty() ? http::newRequestId() : req.requestId;
  claim.crossKey = crossKeyCheck(*tier, req.headers);
  claim.freshTried = wait.freshTried;
  c.started = wait.started;
  c.ready = true;

  // The work of this key ran here and its record waits for the store: answer from it (the store
  // would say 409, or 503 while it is away, and after the lease a takeover would run it again).
  c.pending = m_backlog.find(claim.scope);
  // A done key this process replayed moments ago: its answer cannot have changed (ReplayCache
  // says within which bounds), so it is replayed without the store and traced all the same.
  if (!c.pending)
    if (auto hit = m_replays->find(claim.scope, claim.fingerprint))
      return replayHit(claim.scope, *tier, *hit, claim.fingerprint, c.started, claim.requestId, docs);
  return std::nullopt;
}

Decision Enforcer::conclude(const Claim& c, const PolicyPtr& snapshot, const policy::Policy::Match& match,
                            store::ClaimResult result, const std::string& notWaited, Clock::time_point sentAt) {
  const std::string& docs = snapshot->policy.docsUrl;
  const policy::Tier* tier = match.tier;
  const store::ClaimRequest& claim = c.request;
  const std::string& key = claim.scope.key;
  const std::string& fingerprint = claim.fingerprint;
  const Clock::time_point started = c.started;
  const bool pending = c.pending.has_value();

  // A refusal that the store decided (409/422): problem+json with the key headers, traced.
  auto refuse = [&](Problem problem, trace::Outcome outcome, std::string_view detail,
                    const std::string& retryAfter = {}, std::string_view traced = {}) {
    Response r = makeProblem(problem, docs, detail, key);
    if (!retryAfter.empty()) r.headers.emplace_back("Retry-After", retryAfter);
    addKeyHeaders(r, key, result.expiresAt);
    trace(claim.scope, *tier, result, outcome, fingerprint, r.status, msSince(started), claim.requestId, traced);
    return respond(std::move(r), std::string(trace::sqlName(outcome)), tier->name);
  };
  using D = store::Decision;
  // Another key ran this very request inside the tier's window: recorded with both keys, and
  // answered instead of executed when the tier holds or rejects it.
  std::string crossKeyMode;
  if (result.match && claim.crossKey) {
    Response held;
    if (result.decision == D::Duplicate) {
      held = duplicateProblem(*result.match, result.now, tier->crossKey, docs, key);
      addKeyHeaders(held, key, std::nullopt);
    }
    crossKeyMode = traceMatch(claim.scope, *tier, result, *claim.crossKey, fingerprint,
                              result.decision == D::Duplicate ? held.status : 0,
                              msSince(started), claim.requestId);
    if (result.decision == D::Duplicate) {
      Decision d = respond(std::move(held),
                           std::string(trace::sqlName(crossKeyOutcome(result, *claim.crossKey, tier->crossKey))),
                           tier->name);
      d.crossKeyMode = std::move(crossKeyMode);
      return d;
    }
  }
  switch (result.decision) {
    case D::Execute:
    case D::ExecuteAfterExpiry:
    case D::Takeover: {
      Decision d;
      d.crossKeyMode = std::move(crossKeyMode);
      d.kind = Decision::Kind::Execute;
      d.tier = tier->name;
      d.outcome = trace::sqlName(result.decision == D::ExecuteAfterExpiry ? trace::Outcome::ExecutedAfterExpiry
                                 : result.decision == D::Takeover         ? trace::Outcome::LeaseTakeover
                                                                          : trace::Outcome::Executed);
      Ticket t;
      t.m_owner = this;
      t.m_scope = claim.scope;
      t.m_leaseToken = result.leaseToken;
      t.m_requestId = claim.requestId;
      t.m_fingerprint = fingerprint;
      t.m_policy = snapshot;
      t.m_tier = tier;
      t.m_generation = result.generation;
      t.m_afterExpiry = result.decision == D::ExecuteAfterExpiry;
      t.m_takeover = result.decision == D::Takeover;
      t.m_expiresAt = result.expiresAt.value_or(0);
      t.m_started = started;
      m_leases.hold(t.m_scope, t.m_leaseToken, tier->lease);
      m_replays->erase(t.m_scope);  // the key runs again here (an operator purged it): forget its old answer
      d.ticket.emplace(std::move(t));
      return d;
    }
    case D::Replay:
      if (result.bodyRefused) return replayBusy(docs, key, tier->name);
      if (!pending) m_replays->put(claim.scope, fingerprint, result, sentAt);  // the store's answer only
      return replay(claim.scope, *tier, result, std::move(*result.stored), fingerprint, started, claim.requestId, docs);
    case D::Conflict: {
      Decision d = refuse(Problem::RequestInProgress, trace::Outcome::Conflict,
                          "A request with the same key is still being processed. Retry after the Retry-After "
                          "delay with the same key and the same payload.",
                          conflictRetryAfter(result), notWaited);
      d.detail = notWaited;
      return d;
    }
    case D::Mismatch:
      return refuse(Problem::PayloadMismatch, trace::Outcome::Mismatch,
                    match.templated ? "This key was first used with a different request (another payload, or another "
                                      "path of the route " + std::string(match.route) + "). Check the outcome of the "
                                      "original request; to make a different request, use a new key."
                                    : "This key was first used with a different request payload. Check the outcome of "
                                      "the original request; to make a different request, use a new key.");
    case D::Duplicate:  // answered above; a Duplicate without its match cannot come from the store
      break;
    case D::RejectedExpired:
      return refuse(Problem::KeyExpired, trace::Outcome::RejectedExpired,
                    "key expired — reconcile, then use a new key. This key is past its validity window, so the "
                    "original outcome can no longer be replayed.");
  }
  return Decision{};
}

Decision Enforcer::replayBusy(const std::string& docsUrl, const std::string& key, const std::string& tier) const {
  Response r = makeProblem(Problem::Overloaded, docsUrl,
                           "The server is sending as many stored answers as its replay budget allows "
                           "(--max-replay-bytes); retry shortly with the same key. Nothing was executed.",
                           key);
  r.headers.emplace_back("Retry-After", "1");
  return respond(std::move(r), "unavailable", tier);
}

Decision Enforcer::replay(const store::Scope& scope, const policy::Tier& tier, const store::ClaimResult& decided,
                          store::StoredResponse stored, const std::string& fingerprint, Clock::time_point started,
                          const std::string& requestId, const std::string& docsUrl) {
  // The body's bytes stay in the replay budget until the transport has written the answer.
  std::shared_ptr<const void> hold = decided.bodyHold;
  if (!hold)
    if (store::ReplayBodies* bodies = m_store.replayBodies()) {
      hold = bodies->take(stored.body.size(), stored.body.size() > store::kInlineReplayBody);
      if (!hold) return replayBusy(docsUrl, scope.key, tier.name);
    }
  Response r;
  r.status = stored.status;
  for (const auto& [name, value] : stored.headers)
    if (allowedOnReplay(tier, name)) r.headers.emplace_back(name, value);
  r.headers.emplace_back(kReplayedHeader, "true");
  r.body = std::move(stored.body);
  addKeyHeaders(r, scope.key, decided.expiresAt);
  const double waited = msSince(started);
  // A request that waited for the original is a replay like any other (it got the stored
  // answer, nothing ran); its latency and this detail say that it waited.
  trace(scope, tier, decided, trace::Outcome::Replayed, fingerprint, r.status, waited, requestId,
        tier.onConflict.wait && waited > 20 ? "replayed after waiting for the original" : "");
  Decision d = respond(std::move(r), std::string(trace::sqlName(trace::Outcome::Replayed)), tier.name);
  d.bodyHold = std::move(hold);
  return d;
}

}  // namespace idem::enforce
