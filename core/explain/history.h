#pragma once
// Everything the store knows about one idempotency key: its generations (live and archived),
// its event trace and the policy in force when each generation was written. Plain data: the
// loader (loader.h) fills it from PostgreSQL; the analysis and the formats (explain.h,
// format.h) work on it without a database, so the console and the tests can use them alone.
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/trace/outcome.h"

namespace idem::explain {

/// A point in time as the database stored it: microseconds since the Unix epoch, UTC.
struct Instant {
  std::int64_t micros = 0;
  auto operator<=>(const Instant&) const = default;
};

/// ISO-8601 UTC: "2026-03-02T10:00:00Z"; ".123Z" / ".123456Z" only when not whole seconds.
[[nodiscard]] std::string isoUtc(Instant t);
/// Parses what isoUtc writes (also without the fraction); nullopt otherwise. For tests and tools.
[[nodiscard]] std::optional<Instant> parseIsoUtc(std::string_view text);

/// Tenant + endpoint + service: the same key under another scope is another key (docs/design.md
/// §2; services share a store as tenants do: docs/store.md, "Services").
struct Scope {
  std::string tenant;    // "" when the policy names no tenant header
  std::string endpoint;  // "POST /v1/payments"
  std::string service = "default";

  /// "acct_42 POST /v1/payments"; "POST /v1/payments" when the tenant is empty. Without the
  /// service: what --scope takes (the service goes with --service).
  [[nodiscard]] std::string text() const;
  /// text(), with "service NAME: " in front when the service is not "default": for lists and
  /// headings that must tell two services' keys apart.
  [[nodiscard]] std::string label() const;
  /// Parses text(): the last two words are the method and the path, anything before them is
  /// the tenant. The method is upper-cased. nullopt when there are fewer than two words.
  [[nodiscard]] static std::optional<Scope> parse(std::string_view text);
  auto operator<=>(const Scope&) const = default;
};

/// The policy version that governed a generation.
struct PolicyInForce {
  int version = 0;
  Instant effectiveAt;
  std::string sha256;
  /// true: the key recorded this version; false: inferred as the newest policy that had taken
  /// effect when the generation was created (older rows without policy_version).
  bool recorded = true;
  /// The generation's tier as that policy wrote it (name, ttl, lease, on_expired, ...), or null
  /// when the policy has no tier of that name.
  nlohmann::json tier;
};

/// One generation of a key: generation n+1 starts when a request arrives after n expired.
struct Generation {
  int number = 0;
  bool live = false;  // the row in idem.keys; otherwise an idem.key_archive row
  std::string tier;
  std::string state;  // processing | done (state when archived, for archived rows)
  std::string fingerprintHex;
  std::optional<int> status;
  std::optional<std::string> resourceRef;
  std::optional<std::string> requestId;
  Instant createdAt;
  std::optional<Instant> completedAt;
  Instant expiresAt;
  std::optional<Instant> leaseUntil;  // live processing rows
  std::optional<Instant> archivedAt;
  std::string archivedBy;             // sweeper | reuse (archived rows)
  std::optional<Instant> purgeAfter;  // archived rows
  bool bodyDropped = false;
  std::optional<Instant> bodyDroppedAt;
  // The stored response, read only when asked for (LoadOptions::responses): the console's
  // Response tab shows it; the explanation does not need it.
  std::string headersJson;  // resp_headers as PostgreSQL prints the jsonb
  std::string body;         // resp_body bytes
  std::optional<int> policyVersion;     // as recorded on the row
  std::optional<PolicyInForce> policy;  // resolved
};

/// One decision from idem.events.
struct Event {
  long long id = 0;
  Instant at;
  std::string outcome;  // as stored: one of trace::kOutcomes' names (see known())
  std::optional<int> generation;
  std::optional<int> status;
  std::optional<double> latencyMs;
  std::optional<std::string> requestId;
  std::optional<std::string> detail;
  std::string fingerprintHex;
  // A folded retry storm (idem.events.repeats > 1): this row stands for `repeats` identical
  // decisions from `at` to `lastAt`; requestId is the last one's, latencyMs the slowest.
  int repeats = 1;
  std::optional<Instant> lastAt;
  /// A duplicate across keys (trace::OutcomeKind::CrossKey): the earlier key, in the same scope,
  /// whose execution this request matched.
  std::optional<std::string> relatedKey;

  /// The outcome, when this build knows its name (a newer writer may know more).
  [[nodiscard]] std::optional<trace::Outcome> known() const { return trace::parseOutcome(outcome); }
  /// The operation ran (trace::isExecution), or may have: not the outcome_unknown a taken-over
  /// key stored for its stopped holder's request without running it again (on_takeover).
  [[nodiscard]] bool isExecution() const {
    const auto o = known();
    return o && trace::isExecution(*o) && !notRunAfterTakeover();
  }
  /// The row a retry wrote when it took the key over and answered "outcome unknown" instead of
  /// running it: it stands for the stopped holder's request (store::kNotRunAfterTakeover).
  [[nodiscard]] bool notRunAfterTakeover() const;
};

/// A duplicate across keys this key takes part in (docs/policy.md, "Duplicates across keys"):
/// a request under one key matched an execution of the same request (same scope, same
/// fingerprint, inside the tier's window) under another key. The trace row is on the later key
/// and names the earlier one; the loader reads it from either side.
struct CrossKeyMatch {
  /// true: the request under this key matched another key's earlier execution (the event is
  /// one of this key's); false: a later key's request matched this key's execution.
  bool thisKeyIsLater = true;
  Event event;               ///< the CrossKey trace row, on the later key
  std::string otherKey;      ///< the other key of the pair
  /// The other key's generation that the match concerns: the earlier key's latest generation
  /// created before the event; the later key's generation the event names (its execution,
  /// under observe or when confirmed). nullopt when none is stored (a held request stores none).
  std::optional<Generation> other;
};

struct KeyHistory {
  Scope scope;
  std::string key;
  Instant observedAt;                   // the database's now() when this was loaded
  std::vector<Generation> generations;  // ascending generation number
  std::vector<Event> events;            // ascending time (then id)
  std::vector<CrossKeyMatch> crossKey;  // ascending event time
};

}  // namespace idem::explain
