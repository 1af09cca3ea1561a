#include "core/store/keybatches.h"

#include <algorithm>
#include <cctype>
#include <span>

#include "core/policy/duration.h"
#include "core/store/headercodec.h"
#include "core/store/keysql.h"
#include "core/store/pgarray.h"

namespace idem::store {
namespace {

using namespace sql;
using pg::Type;

// Up to kWriteBatchesInFlight batches of each kind in flight (keystore.h). Measured (RESULTS.md,
// "the lane that lost its slots"): on a 4 ms flush eight beat one or two by 30-50 % at 8-64
// clients; on a 0.2 ms flush two beat eight by ~20 % at 16-64. So the lanes find their count
// (inflighttuner.h), starting at eight: too few costs more than too many.
InFlightTuner tunerFor(const WriteBatching& b) {
  if (b.inFlight > 0) return InFlightTuner::fixed(b.inFlight);
  InFlightTuner::Settings s;
  s.min = 1;
  s.max = kWriteBatchesInFlight;
  s.start = kWriteBatchesInFlight;
  return InFlightTuner(s);
}


pg::Param policyVersionParam(const ClaimRequest& q) {
  return q.policyVersion > 0 ? pg::Param(q.policyVersion) : pg::Param::null();
}

/// Where a batch statement's returned rows name their key.
struct ScopeColumns {
  int tenant, endpoint, key, service;
};

/// Whether a returned row is `s`'s: rows come back by key, not in the order they were sent.
bool rowIsScope(const pg::Result& r, int row, const ScopeColumns& col, const Scope& s) {
  return r.text(row, col.key) == s.key && r.text(row, col.endpoint) == s.endpoint && r.text(row, col.tenant) == s.tenant &&
         r.text(row, col.service) == s.service;
}

bool sameUuid(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](char x, char y) { return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y)); });
}

/// Runs `statement` on the jobs; when it fails with an error of the statement (not of the
/// store as a whole), runs each half again, down to the one job that causes it. Every job ends
/// with an outcome or its error.
template <typename Job, typename Statement>
void splitOnError(std::span<Job*> jobs, Statement& statement) {
  try {
    statement(jobs);
  } catch (const pg::QueryError& e) {
    if (jobs.size() == 1 || !worthSplitting(e)) {
      for (auto* j : jobs) j->error = std::current_exception();
      return;
    }
    const auto half = jobs.size() / 2;
    splitOnError(jobs.first(half), statement);
    splitOnError(jobs.subspan(half), statement);
  } catch (...) {
    for (auto* j : jobs) j->error = std::current_exception();
  }
}

}  // namespace

FreshClaimColumns::FreshClaimColumns(const pg::Result& r)
    : generation(r.column("generation", Type::Int4)),
      expiresAt(r.column("expires_at", Type::Timestamptz)),
      leaseToken(r.column("lease_token", Type::Uuid)),
      leaseUntil(r.column("lease_until", Type::Timestamptz)),
      now(r.column("db_now", Type::Timestamptz)) {}

ClaimResult freshClaim(const pg::Result& r, const FreshClaimColumns& col, int row) {
  ClaimResult out;
  out.decision = Decision::Execute;
  out.generation = r.binInt32At(row, col.generation);
  out.expiresAt = r.binTimestampMsAt(row, col.expiresAt);
  out.leaseToken = r.binUuidAt(row, col.leaseToken);
  out.leaseUntil = r.binTimestampMsAt(row, col.leaseUntil);
  out.now = r.binTimestampMsAt(row, col.now);
  return out;
}

void ClaimArrays::add(const ClaimRequest& q) {
  m_tenants.addText(q.scope.tenant);
  m_endpoints.addText(q.scope.endpoint);
  m_keys.addText(q.scope.key);
  m_fingerprints.addBytes(q.fingerprint);
  m_tiers.addText(q.tier);
  if (q.policyVersion > 0) m_versions.addInt4(q.policyVersion);
  else m_versions.addNull();
  m_ttls.addInterval(q.ttl);
  m_leases.addInterval(q.lease);
  m_requestIds.addText(q.requestId);
  m_services.addText(q.scope.service);
  if (q.crossKey) m_sameRequestLatest.addBool(true);
  else m_sameRequestLatest.addNull();
}

std::vector<pg::Param> ClaimArrays::take() {
  return {m_tenants.take(), m_endpoints.take(), m_keys.take(),       m_fingerprints.take(), m_tiers.take(),
          m_versions.take(), m_ttls.take(),     m_leases.take(), m_requestIds.take(),   m_services.take(),
          m_sameRequestLatest.take()};
}

std::vector<pg::Param> completeParams(const CompleteRequest& r) {
  return {r.scope.tenant,
          r.scope.endpoint,
          r.scope.key,
          r.leaseToken,
          r.response.status,
          headersToJson(r.response.headers),
          pg::Param::bytes(r.response.body),
          r.resourceRef ? pg::Param(*r.resourceRef) : pg::Param::null(),
          r.scope.service};
}

CompleteResult completedRow(const pg::Result& r, int row) {
  CompleteResult out;
  out.stored = true;
  out.generation = static_cast<int>(r.integer(row, "generation"));
  out.expiresAt = r.integer(row, "expires_ms");
  out.now = r.integer(row, "now_ms");
  return out;
}

std::vector<pg::Param> freshClaimParams(const ClaimRequest& q) {
  return {q.scope.tenant, q.scope.endpoint, q.scope.key, pg::Param::bytes(q.fingerprint),
          q.tier, policyVersionParam(q), policy::toInterval(q.ttl),
          policy::toInterval(q.lease), q.requestId, q.scope.service,
          q.crossKey ? pg::Param("true") : pg::Param::null()};
}

std::vector<pg::Param> completionBatchParams(std::span<const CompleteRequest* const> batch) {
  pg::ArrayParam tenants(Type::Text), endpoints(Type::Text), keys(Type::Text), tokens(Type::Uuid),
      statuses(Type::Int4), headers(Type::Jsonb), bodies(Type::Bytea), resources(Type::Text), services(Type::Text);
  for (const CompleteRequest* q : batch) {
    tenants.addText(q->scope.tenant);
    endpoints.addText(q->scope.endpoint);
    keys.addText(q->scope.key);
    tokens.addUuid(q->leaseToken);
    statuses.addInt4(q->response.status);
    headers.addJsonb(headersToJson(q->response.headers));
    bodies.addBytes(q->response.body);
    if (q->resourceRef) resources.addText(*q->resourceRef);
    else resources.addNull();
    services.addText(q->scope.service);
  }
  return {tenants.take(),  endpoints.take(), keys.take(),      tokens.take(),  statuses.take(),
          headers.take(),  bodies.take(),    resources.take(), services.take()};
}

std::vector<std::optional<ClaimResult>> claimedRows(const pg::Result& r, std::span<const ClaimRequest* const> sent) {
  std::vector<std::optional<ClaimResult>> out(sent.size());
  const FreshClaimColumns col(r);
  const ScopeColumns scope{r.column("tenant", Type::Text), r.column("endpoint", Type::Text),
                           r.column("idem_key", Type::Text), r.column("service", Type::Text)};
  for (int row = 0; row < r.rows(); ++row) {
    const auto mine = std::find_if(sent.begin(), sent.end(),
                                   [&](const ClaimRequest* q) { return rowIsScope(r, row, scope, q->scope); });
    if (mine != sent.end()) out[static_cast<std::size_t>(mine - sent.begin())] = freshClaim(r, col, row);
  }
  return out;
}

std::vector<std::optional<CompleteResult>> completedRows(const pg::Result& r,
                                                         std::span<const CompleteRequest* const> sent) {
  std::vector<std::optional<CompleteResult>> out(sent.size());
  const ScopeColumns scope{r.column("tenant"), r.column("endpoint"), r.column("idem_key"), r.column("service")};
  const int token = r.column("lease_token");
  for (int row = 0; row < r.rows(); ++row) {
    const auto mine = std::find_if(sent.begin(), sent.end(), [&](const CompleteRequest* q) {
      return rowIsScope(r, row, scope, q->scope) && sameUuid(r.text(row, token), q->leaseToken);
    });
    if (mine != sent.end()) out[static_cast<std::size_t>(mine - sent.begin())] = completedRow(r, row);
  }
  return out;
}

bool worthSplitting(const pg::QueryError& e) { return !(e.transient() && !e.sqlstate().starts_with("40")); }

std::optional<ClaimResult> claimFreshOne(pg::Connection& c, const ClaimRequest& q) {
  std::optional<pg::Result> inserted;
  try {
    inserted.emplace(c.execPrepared("idem_claim_fresh", kFreshClaimSql, freshClaimParams(q), /*binaryResults=*/true));
  } catch (const pg::QueryError& e) {
    // A sweeper archived this key while we inserted (0014's trigger): the key has history.
    if (e.sqlstate() != kArchivedMeanwhile) throw;
    return std::nullopt;
  }
  const FreshClaimColumns col(*inserted);
  if (inserted->rows() != 1) return std::nullopt;
  return freshClaim(*inserted, col, 0);
}

KeyBatches::KeyBatches(Pool& pool, WriteBatching batching)
    : m_pool(pool),
      m_inFlight(tunerFor(batching)),
      m_claims(m_inFlight, kMaxClaimsPerBatch, kMaxClaimsPerBatch),
      m_completions(m_inFlight, kMaxCompletionsPerBatch, kMaxCompletionBytesPerBatch) {}

std::optional<ClaimResult> KeyBatches::claimFresh(const ClaimRequest& q) {
  ClaimJob job{&q, std::nullopt, nullptr};
  m_claims.submit(job, [this](std::vector<ClaimJob*>& jobs) { runClaims(jobs); },
                  [](const ClaimJob&) { return std::size_t{1}; });
  if (job.error) std::rethrow_exception(job.error);
  return std::move(job.claimed);
}

std::optional<CompleteResult> KeyBatches::complete(const CompleteRequest& q) {
  CompletionJob job{&q, std::nullopt, nullptr};
  m_completions.submit(job, [this](std::vector<CompletionJob*>& jobs) { runCompletions(jobs); },
                       [](const CompletionJob& j) { return j.request->response.body.size() + 256; });
  if (job.error) std::rethrow_exception(job.error);
  return job.stored;
}

void KeyBatches::runClaims(std::vector<ClaimJob*>& jobs) {
  ++m_claimBatches;
  m_claimedKeys += static_cast<long long>(jobs.size());
  // Keys of tiers with cross_key ride the same statement, marked as their request's latest
  // execution (migration 0027): a key whose request another key holds returns no row here and
  // decides alone (claimSameRequest).
  std::vector<ClaimJob*> distinct =
      inLockOrder(jobs, [](const ClaimJob& j) -> const Scope& { return j.request->scope; }, /*eachKeyOnce=*/true);
  auto statement = [this](std::span<ClaimJob*> part) {
    // Safe to resend (withRetry): a claim whose commit was acknowledged to nobody returns no row
    // the second time, and its key then decides against its own processing row (409).
    m_pool.withRetry([&](pg::Connection& c) {
      if (part.size() == 1) {
        part[0]->claimed = claimFreshOne(c, *part[0]->request);
        return;
      }
      ClaimArrays arrays;
      std::vector<const ClaimRequest*> sent;
      for (const auto* j : part) {
        arrays.add(*j->request);
        sent.push_back(j->request);
      }
      auto r = c.execPrepared("idem_claim_fresh_batch", kFreshClaimBatchSql, arrays.take(), /*binaryResults=*/true);
      auto rows = claimedRows(r, sent);
      for (std::size_t i = 0; i < part.size(); ++i) part[i]->claimed = std::move(rows[i]);
    });
  };
  if (!distinct.empty()) splitOnError(std::span<ClaimJob*>(distinct), statement);
}

void KeyBatches::runCompletions(std::vector<CompletionJob*>& jobs) {
  ++m_completionBatches;
  m_completedKeys += static_cast<long long>(jobs.size());
  std::vector<CompletionJob*> sorted = inLockOrder(
      jobs, [](const CompletionJob& j) -> const Scope& { return j.request->scope; }, /*eachKeyOnce=*/false);
  auto statement = [this](std::span<CompletionJob*> part) {
    // Not resent on a dead connection (the caller's backlog retries a completion): the error goes
    // to every key of the statement.
    auto lease = m_pool.acquire();
    auto& c = lease.conn();
    try {
      if (part.size() == 1) {
        auto r = c.execPrepared("idem_complete", kCompleteSql, completeParams(*part[0]->request));
        if (r.rows() == 1) part[0]->stored = completedRow(r, 0);
        return;
      }
      std::vector<const CompleteRequest*> sent;
      for (const auto* j : part) sent.push_back(j->request);
      auto r = c.execPrepared("idem_complete_batch", kCompleteBatchSql, completionBatchParams(sent));
      auto rows = completedRows(r, sent);
      for (std::size_t i = 0; i < part.size(); ++i) part[i]->stored = rows[i];
    } catch (const pg::Unavailable&) {
      lease.discard();
      m_pool.dropIdle();
      throw;
    }
  };
  splitOnError(std::span<CompletionJob*>(sorted), statement);
}

WriteBatchStats KeyBatches::stats() const {
  return {m_claimBatches.load(),
          m_claimedKeys.load(),
          m_completionBatches.load(),
          m_completedKeys.load(),
          static_cast<long long>(m_claims.waiting()),
          static_cast<long long>(m_completions.waiting()),
          static_cast<long long>(m_claims.limit()),
          static_cast<long long>(m_completions.limit())};
}

}  // namespace idem::store
