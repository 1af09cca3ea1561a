#pragma once
// An explanation as text (terminal), JSON (stable, for tools) or Markdown (for a ticket).
// Pure: no database.
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/text/outputformat.h"
#include "core/explain/explain.h"

namespace idem::explain {

using Format = text::OutputFormat;


/// The stable JSON document for support (members in this order): scope, tenant, endpoint, key,
/// observed_at, time_zone, executions, in_doubt, cause, generations[] (generation, live, state,
/// tier, status, resource_ref, request_id, fingerprint, created_at, completed_at, expires_at,
/// lease_until, archived_at, archived_by, purge_after, body_dropped_at, policy_version, policy,
/// executions, replays, conflicts, mismatches, rejected_expired, lease_takeovers, released,
/// after_expiry, in_doubt), events[] (at, outcome, generation, status, latency_ms, request_id,
/// detail, repeats, last_at, related_key), narrative, duplicates_across_keys[] (this_key: later |
/// earlier, outcome, at, earlier_key, earlier_resource, earlier_at, later_key, later_resource,
/// gap_ms, both_ran, text), resolution (action, duplicates, possible_duplicates,
/// proposal, executions[] (generation, at, outcome, resource, request_id, status, role, reason, amount
/// ({currency, value, text} or null), amount_problem,
/// after_expiry_ms), prevention (tier, setting, current, current_ms, observed_ms, suggested,
/// suggested_ms, text) or null).
/// For the customer: audience, time_zone, references[], summary, timeline[] (at, text),
/// action, advice — nothing internal.
/// Times are ISO-8601 UTC; the sentences use the explanation's zone; absent values are null.
[[nodiscard]] nlohmann::ordered_json toJson(const Explanation& x, Audience audience = Audience::Internal);
/// For a terminal. Internal: header, generations table, timeline, narrative, resolution.
/// Customer: summary, what happened (dated lines), what will be done.
[[nodiscard]] std::string toText(const Explanation& x, Audience audience = Audience::Internal);
/// For a support ticket (internal: heading, summary, resolution, table of generations, timeline
/// of events — at most maxTimelineEvents listed, then how many more: a rich-text view lays out
/// every line) or for the customer (heading, summary, what happened, what will be done).
[[nodiscard]] std::string toMarkdown(const Explanation& x,
                                     std::size_t maxTimelineEvents = std::numeric_limits<std::size_t>::max(),
                                     Audience audience = Audience::Internal);

[[nodiscard]] std::string render(const Explanation& x, Format format, Audience audience = Audience::Internal);

}  // namespace idem::explain
