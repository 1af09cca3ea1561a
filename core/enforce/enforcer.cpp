#include "core/enforce/enforcer.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <thread>

#include "core/fingerprint/fingerprint.h"
#include "core/http/keyheader.h"

namespace idem::enforce {
namespace {

using Clock = std::chrono::steady_clock;

std::string newRequestId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "req_";
  for (std::uint64_t bits = rng(), i = 0; i < 16; ++i, bits >>= 4) id += kHex[bits & 15];
  return id;
}

bool validTenant(std::string_view t) {
  if (t.size() > 128) return false;
  for (char c : t)
    if (c <= 0x20 || c >= 0x7f) return false;
  return true;
}

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool allowedOnReplay(const policy::Tier& tier, std::string_view name) {
  const auto& allow = tier.replayHeaders.empty() ? policy::defaultReplayHeaders() : tier.replayHeaders;
  for (const auto& a : allow)
    if (http::equalsIgnoreCase(a, name)) return true;
  return false;
}

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

Enforcer::Enforcer(const policy::Policy& policy, int policyVersion, store::KeyStore& store,
                   trace::TraceWriter& trace)
    : m_policy(policy), m_policyVersion(policyVersion), m_store(store), m_trace(trace) {}

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
                     std::string_view outcome, const std::string& fingerprint, int status, double latencyMs,
                     const std::string& requestId, std::string_view detail) {
  trace::Event e;
  e.atMs = claim.now;
  e.tenant = scope.tenant;
  e.endpoint = scope.endpoint;
  e.key = scope.key;
  e.generation = claim.generation;
  e.tier = tier.name;
  e.outcome = outcome;
  e.fingerprint = fingerprint;
  e.status = status;
  e.latencyMs = latencyMs;
  e.requestId = requestId;
  e.detail = detail;
  m_trace.record(e);
}

Decision Enforcer::begin(const Request& req) {
  const auto started = Clock::now();
  const std::string& docs = m_policy.docsUrl;
  const policy::Tier* tier = m_policy.tierFor(req.method, req.path);
  if (!tier) return Decision{};  // Bypass: no tier covers this route

  const auto rawKey = http::findHeader(req.headers, kKeyHeader);
  if (!rawKey) {
    if (!tier->keyRequired) {
      Decision d;
      d.tier = tier->name;
      return d;
    }
    return respond(makeProblem(Problem::KeyMissing, docs,
                               "This operation is idempotent and requires an Idempotency-Key header; see the "
                               "published policy for how long keys are honoured."),
                   "key_missing", tier->name);
  }
  if (http::countHeader(req.headers, kKeyHeader) > 1)
    return respond(makeProblem(Problem::KeyMalformed, docs, "Send exactly one Idempotency-Key header."),
                   "key_malformed", tier->name);
  const http::KeyParse parsed = http::parseIdempotencyKey(*rawKey);
  if (!parsed.key) return respond(makeProblem(Problem::KeyMalformed, docs, parsed.rule), "key_malformed", tier->name);
  const std::string& key = *parsed.key;

  std::string tenant;
  if (!m_policy.tenantHeader.empty()) {
    if (auto t = http::findHeader(req.headers, m_policy.tenantHeader)) tenant = std::string(*t);
    if (!validTenant(tenant))
      return respond(makeProblem(Problem::TenantMalformed, docs,
                                 m_policy.tenantHeader + " must be at most 128 visible ASCII characters.", key),
                     "tenant_malformed", tier->name);
  }

  std::string fingerprint;
  try {
    fingerprint = fp::compute(tier->fingerprint, req.body, req.headers);
  } catch (const fp::BodyTooDeep& e) {
    return respond(makeProblem(Problem::BodyTooDeep, docs, e.what(), key), "body_too_deep", tier->name);
  } catch (const fp::InvalidJson& e) {
    return respond(makeProblem(Problem::BodyInvalid, docs, e.what(), key), "body_invalid", tier->name);
  }

  store::ClaimRequest claim;
  claim.scope = {tenant, req.method + " " + req.path, key};
  claim.fingerprint = fingerprint;
  claim.tier = tier->name;
  claim.policyVersion = m_policyVersion;
  claim.ttl = tier->ttl;
  claim.lease = tier->lease;
  claim.rejectExpired = tier->onExpired == policy::OnExpired::Reject;
  claim.archiveRetention = tier->archiveRetention;
  claim.requestId = req.requestId.empty() ? newRequestId() : req.requestId;

  const auto waitUntil = started + tier->onConflict.waitFor;
  auto poll = std::chrono::milliseconds(25);
  store::ClaimResult result;
  for (;;) {
    try {
      result = m_store.claim(claim);
    } catch (const pg::Unavailable&) {
      Response r = makeProblem(Problem::StoreUnavailable, docs,
                               "The idempotency store cannot be reached, so the request was not executed. "
                               "Retry with the same key later.",
                               key);
      r.headers.emplace_back("Retry-After", "2");
      return respond(std::move(r), "unavailable", tier->name);
    }
    // on_conflict wait:<d>: poll until the original finishes, then replay it.
    if (result.decision != store::Decision::Conflict || !tier->onConflict.wait || Clock::now() >= waitUntil) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(poll, waitUntil - Clock::now()));
    poll = std::min(poll * 2, std::chrono::milliseconds(250));
  }

  // A refusal that the store decided (409/422): problem+json with the key headers, traced.
  auto refuse = [&](Problem problem, const char* outcome, std::string_view detail,
                    const std::string& retryAfter = {}) {
    Response r = makeProblem(problem, docs, detail, key);
    if (!retryAfter.empty()) r.headers.emplace_back("Retry-After", retryAfter);
    addKeyHeaders(r, key, result.expiresAt);
    trace(claim.scope, *tier, result, outcome, fingerprint, r.status, msSince(started), claim.requestId, "");
    return respond(std::move(r), outcome, tier->name);
  };

  using D = store::Decision;
  switch (result.decision) {
    case D::Execute:
    case D::ExecuteAfterExpiry:
    case D::Takeover: {
      Decision d;
      d.kind = Decision::Kind::Execute;
      d.tier = tier->name;
      d.outcome = result.decision == D::ExecuteAfterExpiry ? "executed_after_expiry"
                  : result.decision == D::Takeover         ? "lease_takeover"
                                                           : "executed";
      Ticket t;
      t.m_scope = claim.scope;
      t.m_leaseToken = result.leaseToken;
      t.m_requestId = claim.requestId;
      t.m_fingerprint = fingerprint;
      t.m_tier = tier;
      t.m_generation = result.generation;
      t.m_afterExpiry = result.decision == D::ExecuteAfterExpiry;
      t.m_takeover = result.decision == D::Takeover;
      t.m_expiresAt = result.expiresAt.value_or(0);
      t.m_started = started;
      m_leases.hold(t.m_scope, t.m_leaseToken, tier->lease);
      d.ticket.emplace(std::move(t));
      return d;
    }
    case D::Replay: {
      Response r;
      r.status = result.stored->status;
      for (auto& [name, value] : result.stored->headers)
        if (allowedOnReplay(*tier, name)) r.headers.emplace_back(name, value);
      r.headers.emplace_back(kReplayedHeader, "true");
      r.body = std::move(result.stored->body);
      addKeyHeaders(r, key, result.expiresAt);
      const double waited = msSince(started);
      trace(claim.scope, *tier, result, "replayed", fingerprint, r.status, waited, claim.requestId,
            tier->onConflict.wait && waited > 20 ? "replayed after waiting for the original" : "");
      return respond(std::move(r), "replayed", tier->name);
    }
    case D::Conflict:
      return refuse(Problem::RequestInProgress, "conflict",
                    "A request with the same key is still being processed. Retry after the Retry-After delay "
                    "with the same key and the same payload.",
                    conflictRetryAfter(result));
    case D::Mismatch:
      return refuse(Problem::PayloadMismatch, "mismatch",
                    "This key was first used with a different request payload. Check the outcome of the original "
                    "request; to make a different request, use a new key.");
    case D::RejectedExpired:
      return refuse(Problem::KeyExpired, "rejected_expired",
                    "key expired — reconcile, then use a new key. This key is past its validity window, so the "
                    "original outcome can no longer be replayed.");
  }
  return Decision{};
}

Response Enforcer::complete(Ticket& ticket, Response response, const CompleteOptions& options) {
  ticket.m_open = false;
  const bool success = response.status >= 200 && response.status < 300;
  if (ticket.tier().cache == policy::CacheRule::SuccessOnly && !success) {
    return release(ticket, std::move(response), "not stored: the tier caches 2xx responses only");
  }
  store::CompleteRequest q;
  q.scope = ticket.m_scope;
  q.leaseToken = ticket.m_leaseToken;
  q.response.status = response.status;
  for (const auto& h : response.headers)
    if (allowedOnReplay(ticket.tier(), h.first)) q.response.headers.push_back(h);
  q.response.body = response.body;
  q.resourceRef = options.resourceRef;
  q.latencyMs = msSince(ticket.m_started);
  q.requestId = ticket.m_requestId;
  std::optional<store::CompleteResult> done;  // empty: the store failed while committing
  try {
    done = m_store.complete(q, options.sameTransaction);
  } catch (const pg::Unavailable&) {
  }
  m_leases.drop(ticket.m_leaseToken);
  const std::string& key = ticket.m_scope.key;
  if (done && done->stored) {
    traceExecution(ticket, *done, response.status, q.latencyMs, q.resourceRef);
    addKeyHeaders(response, key, done->expiresAt);
    return response;
  }
  if (options.sameTransaction.empty()) {
    // The work happened but its record did not (lease taken over, or the store failed): pass
    // the handler's answer on; the key stays processing until its lease runs out.
    addKeyHeaders(response, key, ticket.m_expiresAt);
    return response;
  }
  // The side effects rolled back with the completion: nothing was executed.
  if (!done) {
    Response r = makeProblem(Problem::StoreUnavailable, m_policy.docsUrl,
                             "The idempotency store failed while committing; nothing was executed. Retry with "
                             "the same key later.",
                             key);
    r.headers.emplace_back("Retry-After", "2");
    return r;
  }
  Response r = makeProblem(Problem::RequestInProgress, m_policy.docsUrl,
                           "This request's lease on the key expired and a retry took it over; its result was not "
                           "committed. Retry with the same key to get the outcome.",
                           key);
  r.headers.emplace_back("Retry-After", "1");
  addKeyHeaders(r, key, ticket.m_expiresAt);
  return r;
}

void Enforcer::traceExecution(const Ticket& ticket, const store::CompleteResult& done, int status, double latencyMs,
                              const std::optional<std::string>& resourceRef) {
  trace::Event e;
  e.atMs = done.now;
  e.tenant = ticket.m_scope.tenant;
  e.endpoint = ticket.m_scope.endpoint;
  e.key = ticket.m_scope.key;
  e.generation = done.generation;
  e.tier = ticket.tier().name;
  e.outcome = ticket.m_afterExpiry ? "executed_after_expiry" : "executed";
  e.fingerprint = ticket.m_fingerprint;
  e.status = status;
  e.latencyMs = latencyMs;
  e.requestId = ticket.m_requestId;
  if (resourceRef) e.detail = *resourceRef;  // support starts from the id the customer quotes
  e.execution = true;
  m_trace.record(e);
}

Response Enforcer::release(Ticket& ticket, Response response, const std::string& reason) {
  ticket.m_open = false;
  m_leases.drop(ticket.m_leaseToken);
  try {
    m_store.release(ticket.m_scope, ticket.m_leaseToken, response.status, ticket.m_requestId, reason);
  } catch (const pg::Unavailable&) {
    // The processing row stays until its lease expires; a retry then takes it over.
  }
  addKeyHeaders(response, ticket.m_scope.key, std::nullopt);
  return response;
}

}  // namespace idem::enforce
