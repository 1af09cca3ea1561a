#pragma once
// From what happened to what to do: each execution of a key with the resource it created, the
// ones the policy did not intend marked as duplicates, the resolution in words, its cause and
// the policy change that would have prevented it. Pure, like explain.h: computed from the
// history and the summaries, without a database.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/explain/history.h"
#include "core/policy/amount.h"

namespace idem::explain {

/// What one execution was, as far as the store can tell.
enum class ExecutionRole {
  Intended,           ///< the execution of the request the key protects
  Duplicate,          ///< ran again for the same request while an earlier execution's effect stands
  PossibleDuplicate,  ///< ran again; whether an earlier execution took effect is unknown
  SeparateRequest,    ///< same key, another payload, after expiry: a new request, not a duplicate
  NoEffect,           ///< its changes were rolled back (it finished after its lease was taken over)
  OutcomeUnknown,     ///< may or may not have run (no answer from the service, or its executor died)
  /// ran under this key for the same request another key had executed just before (a client
  /// that made a new key for its retry): a duplicate unless the customer meant two
  SuspectedDuplicate,
};
/// The JSON spelling: "intended", "duplicate", "possible_duplicate", "separate_request",
/// "no_effect", "outcome_unknown", "suspected_duplicate".
[[nodiscard]] std::string_view roleName(ExecutionRole role);

/// One execution of the operation.
struct Execution {
  int generation = 0;
  /// When it ran as recorded: its completion's trace row, else the key's completion time; for
  /// an execution that lost its lease or never completed, when it started.
  Instant at;
  /// The record it comes from: a trace outcome ("executed", "executed_after_expiry",
  /// "lease_takeover" for the execution that lost its lease, "outcome_unknown"), "done" (the
  /// key says it ran, the trace row is missing) or "in_doubt" (processing, nobody's lease).
  std::string outcome;
  /// The resource it created ("pay_…"), as the store recorded it: the key's resource_ref, else
  /// its trace row's (a late execution's lease_lost row names it); nullopt when the store does
  /// not hold it (an executor that died, a service that names none).
  std::optional<std::string> resource;
  std::optional<std::string> requestId;
  std::optional<int> status;
  ExecutionRole role = ExecutionRole::Intended;
  /// Internal words: "executed again 33 min after the key expired".
  std::string reason;
  /// For an execution of a generation that started after the previous one expired: how long after.
  std::optional<std::chrono::microseconds> afterExpiry;
  /// What it charged, read from its generation's stored response at the path the policy in
  /// force names for the route (a tier's "amount"); nullopt when not known.
  std::optional<policy::Money> amount;
  /// Why amount is unknown although the policy names where to read it (internal words: "the
  /// response has no /amount"); "" otherwise.
  std::string amountProblem;
};

/// The policy change that would have prevented the duplicate.
struct Prevention {
  std::string tier;
  std::string setting;  ///< "ttl" or "lease"
  std::optional<std::chrono::milliseconds> current;  ///< the tier's value then (policy in force)
  /// What was observed: the client's retry horizon (first request to last retry of the same
  /// payload) for "ttl"; how long the superseded execution ran for "lease".
  std::chrono::microseconds observed{0};
  std::chrono::milliseconds suggested{0};  ///< the observed value rounded up to a whole unit
  std::string text;                        ///< in words
};

struct Resolution {
  enum class Action { None, Refund, Verify };
  Action action = Action::None;
  std::vector<Execution> executions;  ///< every execution, in order (in-doubt ones included)
  int duplicates = 0;                 ///< executions with role Duplicate (or SuspectedDuplicate)
  int possibleDuplicates = 0;         ///< PossibleDuplicate or OutcomeUnknown next to another execution
  /// Internal words, "" when nothing is to be done: "Refund pay_456 (generation 2, charged
  /// 4 Dec 2026, 11:05 UTC, 33 min after the key expired)."
  std::string proposal;
  std::optional<Prevention> prevention;
};
/// "none" | "refund" | "verify".
[[nodiscard]] std::string_view actionName(Resolution::Action action);

/// The words of the domain, from the endpoint: a payments route charges and refunds; anything
/// else creates and reverses.
struct Vocabulary {
  std::string undo;     ///< "refund" | "reverse"
  std::string created;  ///< "charged" | "created"
  std::string thing;    ///< "charge" | "resource"
};
[[nodiscard]] Vocabulary vocabularyFor(const Scope& scope);

}  // namespace idem::explain
