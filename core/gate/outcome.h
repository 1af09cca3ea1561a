#pragma once
// What became of a request at the gate: the `outcome` label of idem_requests_total, of
// idem_request_duration_seconds and of the access log. One vocabulary for `serve` and `proxy`
// (docs/behaviour.md, "Outcome labels"); the names here ARE the labels, so a label cannot be
// spelt two ways. The trace's outcomes (core/trace/outcome.h) keep their SQL spelling here.
#include <optional>
#include <string_view>

namespace idem::gate {

// X(enumerator, label)
#define IDEM_GATE_OUTCOMES(X)                                                                       \
  /* decided by the store (the trace's own names) */                                               \
  X(Executed, "executed")                                                                          \
  X(ExecutedAfterExpiry, "executed_after_expiry")                                                  \
  X(LeaseTakeover, "lease_takeover")                                                               \
  X(Replayed, "replayed")                                                                          \
  X(Conflict, "conflict")                                                                          \
  X(Mismatch, "mismatch")                                                                          \
  X(RejectedExpired, "rejected_expired")                                                           \
  X(Released, "released")                                                                          \
  X(LeaseLost, "lease_lost")                                                                       \
  X(OutcomeUnknown, "outcome_unknown")                                                             \
  /* the same request as another key's execution (docs/policy.md, "Duplicates across keys") */    \
  X(DuplicateObserved, "duplicate_observed")                                                       \
  X(DuplicateConfirmed, "duplicate_confirmed")                                                     \
  X(DuplicateHeld, "duplicate_held")                                                               \
  X(DuplicateRejected, "duplicate_rejected")                                                       \
  /* refused before the store decided anything: nothing executed or stored */                      \
  X(KeyMissing, "key_missing")                                                                     \
  X(KeyMalformed, "key_malformed")                                                                 \
  X(KeyNotHonoured, "key_not_honoured")                                                            \
  X(TenantMissing, "tenant_missing")                                                               \
  X(TenantMalformed, "tenant_malformed")                                                           \
  X(TenantRejected, "tenant_rejected")                                                             \
  X(BodyInvalid, "body_invalid")                                                                   \
  X(BodyTooDeep, "body_too_deep")                                                                  \
  X(BadRequest, "bad_request")                                                                     \
  X(DurabilityRefused, "durability_refused")                                                       \
  X(Unavailable, "unavailable")                                                                    \
  /* passed to the execution without a key: no tier covers the route, or its tier's rollout is  */ \
  /* when-present (docs/policy.md, "Rollout")                                                    */ \
  X(Forwarded, "forwarded")                                                                        \
  X(PassedWithoutKey, "passed_without_key")                                                        \
  /* a tier in observe: passed to the execution although enforcement decided otherwise; what it */ \
  /* would have answered is the `would` label (one of the labels above: key_missing, replayed,  */ \
  /* conflict, mismatch, rejected_expired, unavailable, ...)                                    */ \
  X(Observed, "observed")                                                                          \
  /* the gate's pages and what the execution itself answered */                                    \
  X(Read, "read")                                                                                  \
  X(Health, "health")                                                                              \
  X(NotFound, "not_found")                                                                         \
  X(MethodNotAllowed, "method_not_allowed")                                                        \
  X(BadQuery, "bad_query")                                                                         \
  X(AwaitingUpstream, "awaiting_upstream")                                                         \
  X(UpstreamUnavailable, "upstream_unavailable")                                                   \
  X(UpstreamTimeout, "upstream_timeout")                                                           \
  X(UpstreamBroken, "upstream_broken")                                                             \
  X(Error, "error")

enum class Outcome {
#define IDEM_GATE_OUTCOME_ENUMERATOR(name, label) name,
  IDEM_GATE_OUTCOMES(IDEM_GATE_OUTCOME_ENUMERATOR)
#undef IDEM_GATE_OUTCOME_ENUMERATOR
};

inline constexpr Outcome kOutcomes[] = {
#define IDEM_GATE_OUTCOME_VALUE(name, label) Outcome::name,
    IDEM_GATE_OUTCOMES(IDEM_GATE_OUTCOME_VALUE)
#undef IDEM_GATE_OUTCOME_VALUE
};

/// The metric label ("executed", "forwarded", ...).
[[nodiscard]] constexpr std::string_view label(Outcome o) {
  switch (o) {
#define IDEM_GATE_OUTCOME_LABEL(name, label) \
  case Outcome::name:                        \
    return label;
    IDEM_GATE_OUTCOMES(IDEM_GATE_OUTCOME_LABEL)
#undef IDEM_GATE_OUTCOME_LABEL
  }
  return "error";
}

/// The outcome a label names; nullopt for a label not in the vocabulary.
[[nodiscard]] constexpr std::optional<Outcome> outcomeNamed(std::string_view text) {
  for (const Outcome o : kOutcomes)
    if (label(o) == text) return o;
  return std::nullopt;
}

}  // namespace idem::gate
