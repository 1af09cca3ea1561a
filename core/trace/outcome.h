#pragma once
// The trace's vocabulary: what became of one request under a key, as idem.events.outcome
// records it. Every layer (the enforcer writing it, explain and tiers reading it, the console
// drawing it) takes the facts from here; the database's CHECK lists the same names (a store
// test compares the two).
//
// Adding an outcome: one line in IDEM_TRACE_OUTCOMES below, and a migration that re-creates
// idem.events' CHECK with the new name. Readers that treat outcomes one by one switch over
// Outcome without `default:`, so the compiler names each place that must decide.
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace idem::trace {

/// What a reader of the trace does with an outcome: the families the console colours, the
/// timeline's lanes and the counters of `idemctl explain` are built on.
enum class OutcomeKind {
  Execution,  // the operation ran
  Replay,     // the stored response was sent again; nothing ran
  InProgress, // refused with 409: the original was still running
  Refused,    // refused with 422: another payload, or an expired key the tier will not re-run
  NotStored,  // an attempt whose result the key does not hold (released, lease lost)
  Observed,   // a tier in `observe`: passed to the execution; names what enforcement would have done
  CrossKey,   // matched another key's execution of the same request (idem.events.related_key names it)
};

// X(enumerator, SQL spelling, kind, retry, label). `retry`: a later request to a key whose
// distance from the first execution tells how long keys must live (the tiers analysis).
// The label is for people: "409 conflict", "executed after expiry".
#define IDEM_TRACE_OUTCOMES(X)                                                                        \
  X(Executed, "executed", Execution, false, "executed")                                              \
  X(ExecutedAfterExpiry, "executed_after_expiry", Execution, true, "executed after expiry")          \
  X(LeaseTakeover, "lease_takeover", Execution, false, "lease taken over")                           \
  X(Replayed, "replayed", Replay, true, "replayed")                                                  \
  X(Conflict, "conflict", InProgress, true, "409 conflict")                                          \
  X(Mismatch, "mismatch", Refused, true, "422 fingerprint mismatch")                                 \
  X(RejectedExpired, "rejected_expired", Refused, true, "422 rejected: expired")                     \
  X(Released, "released", NotStored, false, "released (not stored)")                                 \
  X(LeaseLost, "lease_lost", NotStored, false, "lease lost")                                         \
  X(OutcomeUnknown, "outcome_unknown", Execution, false, "outcome unknown (no answer from the service)")     \
  /* observe (docs/policy.md, "Rollout"): the request ran; enforcement would have answered instead */  \
  X(ObservedKeyMissing, "observed_key_missing", Observed, false, "observe: would 400 (no key)")          \
  X(ObservedKeyMalformed, "observed_key_malformed", Observed, false, "observe: would 400 (malformed key)") \
  X(ObservedReplayed, "observed_replayed", Observed, true, "observe: would replay")                     \
  X(ObservedConflict, "observed_conflict", Observed, true, "observe: would 409")                       \
  X(ObservedMismatch, "observed_mismatch", Observed, true, "observe: would 422 (other payload)")          \
  X(ObservedRejectedExpired, "observed_rejected_expired", Observed, true, "observe: would 422 (expired)") \
  X(ObservedRefused, "observed_refused", Observed, false, "observe: would refuse (see detail)")       \
  /* duplicates across keys (docs/policy.md, "Duplicates across keys"): same request, another key */   \
  X(DuplicateObserved, "duplicate_observed", CrossKey, false, "suspected duplicate (executed)")           \
  X(DuplicateConfirmed, "duplicate_confirmed", CrossKey, false, "duplicate confirmed by the client (executed)") \
  X(DuplicateHeld, "duplicate_held", CrossKey, false, "suspected duplicate held (409)")                   \
  X(DuplicateRejected, "duplicate_rejected", CrossKey, false, "duplicate refused (409)")

enum class Outcome {
#define IDEM_OUTCOME_ENUMERATOR(name, sql, kind, retry, label) name,
  IDEM_TRACE_OUTCOMES(IDEM_OUTCOME_ENUMERATOR)
#undef IDEM_OUTCOME_ENUMERATOR
};

struct OutcomeFacts {
  Outcome outcome;
  std::string_view sql;  // idem.events.outcome
  OutcomeKind kind;
  bool retry;
  std::string_view label;
};

/// Every outcome, in declaration order.
inline constexpr std::array kOutcomes{
#define IDEM_OUTCOME_FACTS(name, sql, kind, retry, label) \
  OutcomeFacts{Outcome::name, sql, OutcomeKind::kind, retry, label},
    IDEM_TRACE_OUTCOMES(IDEM_OUTCOME_FACTS)
#undef IDEM_OUTCOME_FACTS
};
inline constexpr std::size_t kOutcomeCount = kOutcomes.size();

[[nodiscard]] constexpr const OutcomeFacts& facts(Outcome o) { return kOutcomes[static_cast<std::size_t>(o)]; }
[[nodiscard]] constexpr std::string_view sqlName(Outcome o) { return facts(o).sql; }
[[nodiscard]] constexpr std::string_view label(Outcome o) { return facts(o).label; }
[[nodiscard]] constexpr OutcomeKind kind(Outcome o) { return facts(o).kind; }
/// The operation ran: these count towards "executions".
[[nodiscard]] constexpr bool isExecution(Outcome o) { return kind(o) == OutcomeKind::Execution; }
[[nodiscard]] constexpr bool isRetry(Outcome o) { return facts(o).retry; }

/// The outcome spelled `sql`; nullopt for a name the trace does not know (a newer writer).
[[nodiscard]] constexpr std::optional<Outcome> parseOutcome(std::string_view sql) {
  for (const auto& f : kOutcomes)
    if (f.sql == sql) return f.outcome;
  return std::nullopt;
}

/// Under `observe`, the trace outcome that records a decision which was not enforced; `would`
/// is the gate's label of that decision (core/gate/outcome.h: key_missing, replayed, conflict,
/// ...). The decisions without an outcome of their own (tenant, body, store, durability) are
/// observed_refused, with `would` in the event's detail.
[[nodiscard]] inline Outcome observedOutcome(std::string_view would) {
  const std::string name = "observed_" + std::string(would);
  const auto named = parseOutcome(name);
  return named && kind(*named) == OutcomeKind::Observed ? *named : Outcome::ObservedRefused;
}

/// The SQL spellings of the outcomes `which` selects, as a literal list for an IN (...) that
/// must name them in the statement's text (a partial index's predicate): "'executed', ...".
/// Safe to splice: the names are lower-case letters and underscores (checked below).
[[nodiscard]] inline std::string sqlLiterals(bool (*which)(Outcome)) {
  std::string out;
  for (const auto& f : kOutcomes)
    if (which(f.outcome)) out += (out.empty() ? "'" : ", '") + std::string(f.sql) + "'";
  return out;
}

static_assert([] {
  for (const auto& f : kOutcomes)
    for (char c : f.sql)
      if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  return true;
}());

// The table is indexed by the enumerator: a line out of order would give wrong facts.
static_assert([] {
  for (std::size_t i = 0; i < kOutcomes.size(); ++i)
    if (static_cast<std::size_t>(kOutcomes[i].outcome) != i) return false;
  return true;
}());

}  // namespace idem::trace
