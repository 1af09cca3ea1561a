// What the enforcer decides before the store: a keyed request's scope and fingerprint, and a
// done key's replay from memory (ReplayCache), which needs nothing else and never blocks.
#include "core/enforce/enforcer.h"
#include "core/enforce/enforcer_support.h"

#include "core/fingerprint/fingerprint.h"
#include "core/http/keyheader.h"
#include "core/http/requestid.h"
#include "core/policy/route.h"

namespace idem::enforce {
using detail::Clock;

namespace {

// The tenant is part of every key's scope and every ledger query: visible ASCII only, so no
// encoding question can make two spellings of one tenant or reach the store as invalid text.
bool validTenant(std::string_view t) {
  if (t.size() > 128) return false;
  for (char c : t)
    if (c <= 0x20 || c >= 0x7f) return false;
  return true;
}

}  // namespace

Enforcer::Scoped Enforcer::scopeOf(const Request& req, const policy::Policy& policy, const policy::Tier& tier,
                                   std::string_view route) const {
  const std::string& docs = policy.docsUrl;
  Scoped out;
  const auto rawKey = http::findHeader(req.headers, kKeyHeader);
  if (!rawKey) {
    if (tier.rollout == policy::Rollout::WhenPresent) {
      out.decided.emplace();
      out.decided->tier = tier.name;
      return out;
    }
    out.decided = respond(makeProblem(Problem::KeyMissing, docs,
                                      "This operation is idempotent and requires an Idempotency-Key header; see the "
                                      "published policy for how long keys are honoured."),
                          "key_missing", tier.name);
    return out;
  }
  if (http::countHeader(req.headers, kKeyHeader) > 1) {
    out.decided = respond(makeProblem(Problem::KeyMalformed, docs, "Send exactly one Idempotency-Key header."),
                          "key_malformed", tier.name);
    return out;
  }
  const http::KeyParse parsed = http::parseIdempotencyKey(*rawKey);
  if (!parsed.key) {
    out.decided = respond(makeProblem(Problem::KeyMalformed, docs, parsed.rule), "key_malformed", tier.name);
    return out;
  }
  const std::string& key = *parsed.key;
  if (!req.tenant && policy.tenantRequired) {
    out.decided = respond(makeProblem(Problem::TenantMissing, docs,
                                      "This request carries no tenant" +
                                          (policy.tenantHeader.empty() ? std::string()
                                                                       : " (" + policy.tenantHeader + " header)") +
                                          "; nothing was executed or stored.",
                                      key),
                          "tenant_missing", tier.name);
    return out;
  }
  const std::string& tenant = req.tenant ? *req.tenant : policy.defaultTenant;
  if (!validTenant(tenant)) {
    out.decided = respond(makeProblem(Problem::TenantMalformed, docs,
                                      "The tenant must be at most 128 visible ASCII characters; nothing was executed "
                                      "or stored.",
                                      key),
                          "tenant_malformed", tier.name);
    return out;
  }
  // Every spelling shares one scope; the keys are the service's whose trace this enforcer writes.
  out.scope = {tenant, std::string(route), key, m_trace.service()};
  return out;
}

Enforcer::Fingerprinted Enforcer::fingerprintOf(const Request& req, const policy::Policy::Match& match,
                                                const std::string& docs, const std::string& key) const {
  const policy::Tier& tier = *match.tier;
  Fingerprinted out;
  try {
    out.fingerprint = fp::compute(tier.fingerprint, req.body, req.headers);
  } catch (const fp::BodyTooDeep& e) {
    out.refused = respond(makeProblem(Problem::BodyTooDeep, docs, e.what(), key), "body_too_deep", tier.name);
  } catch (const fp::InvalidJson& e) {
    out.refused = respond(makeProblem(Problem::BodyInvalid, docs, e.what(), key), "body_invalid", tier.name);
  }
  // A template's key scope spans many paths (docs/policy.md, "Routes"): the request's own path
  // is part of "the same request", so one key on another order's path is a 422, never a second
  // operation. The digest has a fixed length, so content and path cannot bleed into each other.
  if (!out.refused && match.templated) out.fingerprint = fp::sha256(out.fingerprint + match.request);
  return out;
}

std::optional<Enforcer::MemoryHit> Enforcer::findInMemory(const Request& req, const PolicyPtr& snapshot) {
  if (!m_replays->enabled() || !snapshot) return std::nullopt;
  const auto started = Clock::now();
  const policy::Policy::Match match = snapshot->policy.match(req.method, req.path);
  const policy::Tier* tier = match.tier;
  // Observe answers nothing; a durability check may read the store: begin() decides those.
  if (!tier || tier->observed() || tier->durability != policy::DurabilityNeed::Any) return std::nullopt;
  Scoped scoped = scopeOf(req, snapshot->policy, *tier, match.route);
  // The body is hashed only for a key the cache holds: a new key costs the loop no more.
  if (scoped.decided || !m_replays->holds(scoped.scope) || m_backlog.find(scoped.scope)) return std::nullopt;
  Fingerprinted fingerprinted = fingerprintOf(req, match, snapshot->policy.docsUrl, scoped.scope.key);
  if (fingerprinted.refused) return std::nullopt;
  auto hit = m_replays->find(scoped.scope, fingerprinted.fingerprint);
  if (!hit) return std::nullopt;
  return MemoryHit{snapshot,
                   tier,
                   std::string(match.route),
                   std::move(scoped.scope),
                   std::move(fingerprinted.fingerprint),
                   std::move(*hit),
                   started,
                   req.requestId.empty() ? http::newRequestId() : req.requestId};
}

Decision Enforcer::replayFromMemory(const MemoryHit& h) {
  Decision d = replayHit(h.scope, *h.tier, h.hit, h.fingerprint, h.started, h.requestId, h.policy->policy.docsUrl);
  d.route = h.route;
  return d;
}

Decision Enforcer::replayHit(const store::Scope& scope, const policy::Tier& tier, const ReplayCache::Hit& hit,
                             const std::string& fingerprint, Clock::time_point started, const std::string& requestId,
                             const std::string& docsUrl) {
  store::ClaimResult cached;
  cached.decision = store::Decision::Replay;
  cached.generation = hit.generation;
  cached.expiresAt = hit.expiresAt;
  cached.now = hit.dbNow;
  return replay(scope, tier, cached, *hit.response, fingerprint, started, requestId, docsUrl);  // a copy
}

}  // namespace idem::enforce
