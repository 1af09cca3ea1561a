#pragma once
// What the routes of tiers in rollout `observe` saw (docs/policy.md, "Rollout"): per route,
// how many requests enforcement would have answered itself instead of passing them on, by the
// decision it would have made, over a window of the trace; and the requests behind a count.
// The console's Tiers view shows both; `observe` writes them (core/trace/outcome.h, kind Observed).
#include <string>
#include <vector>

#include "core/policy/duration.h"
#include "core/store/pg.h"

namespace idem::tiers {

/// The columns a support engineer reads: what a client would have been answered.
enum class Would {
  Refuse,    // 400: no key, or a malformed one
  Replay,    // the stored answer, instead of running again
  Conflict,  // 409: the key's first request was still running
  Reject,    // 422: the key with another payload, or an expired key on an on_expired: reject tier
  Other,     // the tenant, the body, the store or its durability (the event's detail says which)
};
inline constexpr Would kWouldColumns[] = {Would::Refuse, Would::Replay, Would::Conflict, Would::Reject, Would::Other};

/// "would 400", "would replay", ...: the column's heading.
[[nodiscard]] std::string wouldHeading(Would w);
/// The trace outcomes a column counts (their SQL names).
[[nodiscard]] std::vector<std::string> wouldOutcomes(Would w);

struct ObservedRoute {
  std::string route;  // the policy's route (events.endpoint)
  std::string tier;
  long long counts[std::size(kWouldColumns)] = {};
  [[nodiscard]] long long count(Would w) const { return counts[static_cast<std::size_t>(w)]; }
  [[nodiscard]] long long total() const;
};

/// Per route of `service` with observed requests at or after now() - since, by route.
[[nodiscard]] std::vector<ObservedRoute> observedByRoute(pg::Connection& conn, const std::string& service,
                                                         policy::Millis since);

struct ObservedRequest {
  long long atMs = 0;  // epoch milliseconds
  std::string tenant;
  std::string key;  // empty: the request carried none
  std::string outcome;
  int status = 0;  // what enforcement would have answered
  std::string requestId;
  std::string detail;
  long long repeats = 1;  // a folded retry storm stands for this many
};

/// The newest requests of `service` behind one count (at most `limit`).
[[nodiscard]] std::vector<ObservedRequest> observedRequests(pg::Connection& conn, const std::string& service,
                                                            const std::string& route, Would would, policy::Millis since,
                                                            int limit = 200);

}  // namespace idem::tiers
