#pragma once
// Duplicates across keys made as the enforcer makes them, for the explain and console suites:
// both keys claimed and completed through store::KeyStore with the same fingerprint, the later
// key's CrossKey trace row written by trace::TraceWriter naming the earlier key. The earlier
// key's times are then moved 40 s back, as if it had run 40 s before (a test cannot wait).
#include <chrono>
#include <stdexcept>
#include <string>

#include "core/store/keystore.h"
#include "core/store/pool.h"
#include "core/trace/tracewriter.h"

namespace idem::test {

inline const std::string kPairTenant = "acct_9";
inline const std::string kPairEndpoint = "POST /v1/payments";

class CrossKeyPairs {
 public:
  explicit CrossKeyPairs(const std::string& conninfo) : m_pool(conninfo, 4), m_store(m_pool), m_trace(m_pool) {}

  // Claims and completes `key` as the enforcer would, and queues its executed row; returns the
  // claim's generation and time.
  store::ClaimResult run(const std::string& key, const std::string& fingerprint, int policyVersion = 0) {
    store::ClaimRequest q;
    q.scope = {kPairTenant, kPairEndpoint, key};
    q.fingerprint = fingerprint;
    q.tier = "payments";
    q.policyVersion = policyVersion;
    q.ttl = std::chrono::hours(24);
    q.lease = std::chrono::seconds(30);
    q.archiveRetention = std::chrono::hours(24) * 30;
    q.requestId = "req_" + key;
    auto claim = m_store.claim(q);
    if (claim.decision != store::Decision::Execute) throw std::runtime_error("not a fresh claim: " + key);
    store::CompleteRequest c;
    c.scope = q.scope;
    c.leaseToken = claim.leaseToken;
    c.response.status = 201;
    c.response.body = R"({"id":"pay_)" + key + R"("})";
    c.resourceRef = "pay_" + key;
    c.requestId = q.requestId;
    const auto done = m_store.complete(c);
    record(key, trace::Outcome::Executed, claim.generation, done.now, fingerprint, "", 201);
    return claim;
  }

  void record(const std::string& key, trace::Outcome outcome, int generation, store::DbTime atMs,
              const std::string& fingerprint, const std::string& relatedKey, int status) {
    trace::Event e;
    e.atMs = atMs;
    e.tenant = kPairTenant;
    e.endpoint = kPairEndpoint;
    e.key = key;
    e.generation = generation;
    e.tier = "payments";
    e.outcome = outcome;
    e.fingerprint = fingerprint;
    e.status = status;
    const std::string request = "req_" + key;
    e.requestId = request;
    const std::string detail = relatedKey.empty() ? "pay_" + key : "matches key " + relatedKey + " (window 60s)";
    e.detail = detail;
    e.relatedKey = relatedKey;
    e.execution = outcome == trace::Outcome::Executed;
    m_trace.record(e);
  }

  // `later` repeats `earlier` (same fingerprint); its trace row says `outcome`. A repeat that
  // ran (observe, confirmed) is claimed and completed; a held or refused one stores nothing.
  void make(const std::string& earlier, const std::string& later, trace::Outcome outcome, int policyVersion = 0) {
    (void)run(earlier, "fp-" + earlier, policyVersion);
    repeat(earlier, later, outcome, policyVersion);
    auto c = pg::Connection(m_pool.conninfo());
    c.exec("UPDATE idem.keys SET created_at = created_at - interval '40 s', completed_at = completed_at - "
           "interval '40 s' WHERE idem_key = $1",
           {earlier});
    c.exec("UPDATE idem.events SET at = at - interval '40 s' WHERE idem_key = $1", {earlier});
  }

  // `later` repeats `earlier` once more (after a hold: the client's confirmed resend).
  void repeat(const std::string& earlier, const std::string& later, trace::Outcome outcome, int policyVersion = 0) {
    const std::string fingerprint = "fp-" + earlier;
    const bool ran = outcome == trace::Outcome::DuplicateObserved || outcome == trace::Outcome::DuplicateConfirmed;
    if (ran) {
      const auto claim = run(later, fingerprint, policyVersion);
      record(later, outcome, claim.generation, claim.now, fingerprint, earlier, 0);
    } else {
      auto c = pg::Connection(m_pool.conninfo());
      const auto now = c.exec("SELECT (extract(epoch FROM now()) * 1000)::bigint AS ms").integer(0, "ms");
      record(later, outcome, 0, now, fingerprint, earlier, 409);
    }
    if (!m_trace.flush()) throw std::runtime_error("trace not written");
  }

 private:
  store::Pool m_pool;
  store::KeyStore m_store;
  trace::TraceWriter m_trace;
};

}  // namespace idem::test
