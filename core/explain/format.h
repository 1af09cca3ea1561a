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


/// The stable JSON document (members in this order): scope, tenant, endpoint, key, observed_at, executions, in_doubt,
/// cause, generations[] (generation, live, state, tier, status, resource_ref, request_id,
/// fingerprint, created_at, completed_at, expires_at, archived_at, archived_by, purge_after,
/// policy_version, policy, executions, replays, conflicts, mismatches, rejected_expired,
/// lease_takeovers, released), events[] (at, outcome, generation, status, latency_ms,
/// request_id, detail), narrative. Times are ISO-8601 UTC; absent values are null.
[[nodiscard]] nlohmann::ordered_json toJson(const Explanation& x);
/// For a terminal: header, generations table, timeline, narrative.
[[nodiscard]] std::string toText(const Explanation& x);
/// For a support ticket: heading, summary, table of generations, timeline of events (at most
/// maxTimelineEvents listed, then how many more: a rich-text view lays out every line).
[[nodiscard]] std::string toMarkdown(const Explanation& x,
                                     std::size_t maxTimelineEvents = std::numeric_limits<std::size_t>::max());

[[nodiscard]] std::string render(const Explanation& x, Format format);

}  // namespace idem::explain
