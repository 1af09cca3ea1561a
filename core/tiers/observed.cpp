#include "core/tiers/observed.h"

#include "core/trace/outcome.h"

namespace idem::tiers {
namespace {

using trace::Outcome;

std::vector<Outcome> outcomesOf(Would w) {
  switch (w) {
    case Would::Refuse: return {Outcome::ObservedKeyMissing, Outcome::ObservedKeyMalformed};
    case Would::Replay: return {Outcome::ObservedReplayed};
    case Would::Conflict: return {Outcome::ObservedConflict};
    case Would::Reject: return {Outcome::ObservedMismatch, Outcome::ObservedRejectedExpired};
    case Would::Other: return {Outcome::ObservedRefused};
  }
  return {};
}

// A text[] literal of trace outcomes (lower case and underscores: nothing to quote).
std::string outcomesParam(Would w) {
  std::string out = "{";
  for (const auto& name : wouldOutcomes(w)) out += (out.size() > 1 ? "," : "") + name;
  return out + "}";
}

// One streaming count per column; a folded storm row counts every decision it stands for.
constexpr const char* kByRoute = R"SQL(
SELECT e.endpoint, max(e.tier) AS tier,
       coalesce(sum(e.repeats) FILTER (WHERE e.outcome = ANY ($2::text[])), 0) AS n_refuse,
       coalesce(sum(e.repeats) FILTER (WHERE e.outcome = ANY ($3::text[])), 0) AS n_replay,
       coalesce(sum(e.repeats) FILTER (WHERE e.outcome = ANY ($4::text[])), 0) AS n_conflict,
       coalesce(sum(e.repeats) FILTER (WHERE e.outcome = ANY ($5::text[])), 0) AS n_reject,
       coalesce(sum(e.repeats) FILTER (WHERE e.outcome = ANY ($6::text[])), 0) AS n_other
  FROM idem.events e
 WHERE e.at >= now() - $1::interval AND e.service = $7::text
   AND e.outcome = ANY ($2::text[] || $3::text[] || $4::text[] || $5::text[] || $6::text[])
 GROUP BY e.endpoint
 ORDER BY e.endpoint
)SQL";

constexpr const char* kRequests = R"SQL(
SELECT (extract(epoch FROM e.at) * 1000)::bigint AS at_ms, e.tenant, e.idem_key, e.outcome,
       coalesce(e.status, 0) AS status, coalesce(e.request_id, '') AS request_id,
       coalesce(e.detail, '') AS detail, e.repeats
  FROM idem.events e
 WHERE e.at >= now() - $1::interval AND e.service = $5::text AND e.endpoint = $2::text
   AND e.outcome = ANY ($3::text[])
 ORDER BY e.at DESC
 LIMIT $4::integer
)SQL";

}  // namespace

std::string wouldHeading(Would w) {
  switch (w) {
    case Would::Refuse: return "would 400";
    case Would::Replay: return "would replay";
    case Would::Conflict: return "would 409";
    case Would::Reject: return "would 422";
    case Would::Other: return "would refuse (other)";
  }
  return {};
}

std::vector<std::string> wouldOutcomes(Would w) {
  std::vector<std::string> out;
  for (const Outcome o : outcomesOf(w)) out.emplace_back(trace::sqlName(o));
  return out;
}

long long ObservedRoute::total() const {
  long long n = 0;
  for (const long long c : counts) n += c;
  return n;
}

std::vector<ObservedRoute> observedByRoute(pg::Connection& conn, const std::string& service, policy::Millis since) {
  std::vector<pg::Param> params{policy::toInterval(since)};
  for (const Would w : kWouldColumns) params.emplace_back(outcomesParam(w));
  params.emplace_back(service);
  auto r = conn.exec(kByRoute, params);
  std::vector<ObservedRoute> out;
  static const char* const kColumns[] = {"n_refuse", "n_replay", "n_conflict", "n_reject", "n_other"};
  static_assert(std::size(kColumns) == std::size(kWouldColumns));
  for (int i = 0; i < r.rows(); ++i) {
    ObservedRoute route;
    route.route = r.str(i, "endpoint");
    route.tier = r.str(i, "tier");
    for (std::size_t c = 0; c < std::size(kColumns); ++c) route.counts[c] = r.integer(i, kColumns[c]);
    out.push_back(std::move(route));
  }
  return out;
}

std::vector<ObservedRequest> observedRequests(pg::Connection& conn, const std::string& service,
                                              const std::string& route, Would would, policy::Millis since, int limit) {
  auto r = conn.exec(kRequests, {policy::toInterval(since), route, outcomesParam(would), limit, service});
  std::vector<ObservedRequest> out;
  for (int i = 0; i < r.rows(); ++i) {
    ObservedRequest q;
    q.atMs = r.integer(i, "at_ms");
    q.tenant = r.str(i, "tenant");
    q.key = r.str(i, "idem_key");
    q.outcome = r.str(i, "outcome");
    q.status = static_cast<int>(r.integer(i, "status"));
    q.requestId = r.str(i, "request_id");
    q.detail = r.str(i, "detail");
    q.repeats = r.integer(i, "repeats");
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace idem::tiers
