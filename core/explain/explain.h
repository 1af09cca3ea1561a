#pragma once
// What happened to one key, computed from its history without a database: how many times the
// operation ran, what each generation saw, and a plain-language narrative for a support ticket.
#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/explain/customer.h"
#include "core/explain/history.h"
#include "core/explain/resolution.h"
#include "core/text/humantime.h"

namespace idem::explain {

/// Decisions taken against one generation.
struct GenerationSummary {
  int generation = 0;
  /// Decisions per outcome (indexed by trace::Outcome; a folded storm counts in full), and the
  /// time of the last one. The named counts below are read from these.
  std::array<int, trace::kOutcomeCount> byOutcome{};
  std::array<std::optional<Instant>, trace::kOutcomeCount> lastAt{};
  [[nodiscard]] int count(trace::Outcome o) const { return byOutcome[static_cast<std::size_t>(o)]; }
  /// Times the operation ran in this generation: its execution events (executed,
  /// executed_after_expiry, lease_takeover), and at least 1 when it reached done.
  int executions = 0;
  int replays = 0;
  int conflicts = 0;
  int mismatches = 0;
  int rejectedExpired = 0;
  int takeovers = 0;
  int notRerun = 0;  ///< of the takeovers, those answered "outcome unknown" without running again (on_takeover)
  int released = 0;
  int leaseLost = 0;
  std::optional<Instant> firstExecution;  // earliest execution event
  std::optional<Instant> lastReplay;
  std::optional<Instant> lastRejectedExpired;
  /// Started because the previous generation had expired (or had been swept).
  bool afterExpiry = false;
  /// Same fingerprint as the previous generation: the same request sent again.
  bool samePayloadAsPrevious = false;
  /// Still processing and nobody holds a valid lease: the execution may or may not have run.
  bool inDoubt = false;
};

/// A duplicate across keys this key takes part in, told (crosskey.cpp): the pair, how far apart,
/// and what became of the later request.
struct CrossKeyFinding {
  bool thisKeyIsLater = true;  ///< this key's request matched the other key's earlier execution
  trace::Outcome outcome = trace::Outcome::DuplicateObserved;
  Instant at;  ///< when the later request arrived
  std::string earlierKey;
  std::string laterKey;
  std::optional<std::string> earlierResource;  ///< the earlier key's resource_ref, when stored
  std::optional<std::string> laterResource;    ///< the later key's, when it ran and stored one
  std::optional<Instant> earlierAt;            ///< the earlier key's claim (when its execution began)
  std::optional<Instant> laterAt;              ///< the later key's execution, when it ran
  std::optional<std::chrono::microseconds> gap;  ///< at - earlierAt
  /// The later request executed: observe (flagged only) or confirmed by the client.
  [[nodiscard]] bool bothRan() const {
    return outcome == trace::Outcome::DuplicateObserved || outcome == trace::Outcome::DuplicateConfirmed;
  }
  /// Internal words: "matches pay_X, 40 s earlier, same body, key K1: a client that made a new
  /// key for its retry. Both ran: …".
  std::string text;
};

/// Who reads the explanation: support (keys, generations, leases, request ids) or the customer
/// (plain words, no internals).
enum class Audience { Internal, Customer };
/// "internal" | "customer"; nullopt otherwise.
[[nodiscard]] std::optional<Audience> parseAudience(std::string_view name);

struct ExplainOptions {
  /// The zone of every time in words (narrative, resolution, customer text, text and Markdown
  /// tables). JSON's time fields stay ISO-8601 UTC.
  text::TimeZone zone;
};

struct Explanation {
  KeyHistory history;
  text::TimeZone zone;  ///< as given in ExplainOptions
  /// How many times the operation ran: the sum over generations (and over execution events of
  /// generations no longer stored).
  int executions = 0;
  /// Executions whose outcome is unknown (a processing generation whose lease ran out).
  int inDoubt = 0;
  /// Of `executions`, those the service never answered (`outcome_unknown`, a proxy's request
  /// that may or may not have run).
  int unanswered = 0;
  std::vector<GenerationSummary> generations;  // parallel to history.generations
  std::vector<CrossKeyFinding> crossKey;        // parallel to history.crossKey
  std::string narrative;
  std::string cause;  // "" when nothing went wrong
  /// Each execution with its resource and role, the proposal, the policy change.
  Resolution resolution;
  /// The same story for the customer.
  CustomerExplanation customer;
};

/// Computes the explanation. Pure: the same history always gives the same text.
[[nodiscard]] Explanation explain(KeyHistory history, const ExplainOptions& options = {});

}  // namespace idem::explain
