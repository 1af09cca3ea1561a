#include "core/sim/schedule.h"

#include <charconv>

#include "core/sim/backoff.h"
#include "core/sim/budget.h"
#include "core/sim/rng.h"

namespace idem::sim {

namespace {

constexpr std::string_view kRetryAfterInfix = "-retry-after-";

bool parseInt(std::string_view text, long long& out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size();
}

struct OneOperation {
  const Policy& p;
  const FaultSpec& f;
  Usec latency;

  // How long attempt n occupies the client before it may sleep: the answer's latency, or its
  // timeout (capped by what is left of the deadline); nullopt when it waits for ever.
  std::optional<Usec> attemptLength(Usec sentAt) const {
    if (f.kind != FaultSpec::Kind::Timeout) return latency;
    std::optional<Usec> limit;
    if (p.timeout) limit = *p.timeout;
    if (p.deadline) limit = limit ? std::min(*limit, *p.deadline - sentAt) : *p.deadline - sentAt;
    return limit;
  }
};

}  // namespace

std::optional<FaultSpec> parseFaultSpec(std::string_view profile) {
  FaultSpec f;
  if (profile == "reset") {
    f.kind = FaultSpec::Kind::ConnectionError;
    return f;
  }
  if (profile == "hang") {
    f.kind = FaultSpec::Kind::Timeout;
    return f;
  }
  std::string_view status = profile;
  if (const auto at = profile.find(kRetryAfterInfix); at != std::string_view::npos) {
    long long seconds = 0;
    if (!parseInt(profile.substr(at + kRetryAfterInfix.size()), seconds) || seconds < 0) return std::nullopt;
    f.retryAfter = seconds * kUsecPerSecond;
    status = profile.substr(0, at);
  }
  long long code = 0;
  if (!parseInt(status, code) || code < 400 || code > 599) return std::nullopt;
  f.status = static_cast<int>(code);
  return f;
}

unsigned outcomeOf(const FaultSpec& fault) {
  switch (fault.kind) {
    case FaultSpec::Kind::ConnectionError:
      return kConnectionError;
    case FaultSpec::Kind::Timeout:
      return kTimeout;
    case FaultSpec::Kind::Status:
      break;
  }
  if (fault.status == 409) return kConflict409;
  if (fault.status == 503) return kStatus503;
  if (fault.status >= 500) return kStatus500;  // 500, 502, 504: the simulator's "other 5xx"
  return 0;
}

RetrySchedule simulateSchedule(const Policy& policy, const FaultSpec& fault, int operations, std::uint64_t seed,
                               Usec latency) {
  RetrySchedule out;
  Rng rng(seed);
  const OneOperation op{policy, fault, latency};
  const unsigned outcome = outcomeOf(fault);
  for (int i = 0; i < operations; ++i) {
    BackoffState state;
    Usec sentAt = 0;
    int attempt = 1;
    for (;; ++attempt) {
      const auto length = op.attemptLength(sentAt);
      if (!length || (fault.kind == FaultSpec::Kind::Timeout && *length <= 0)) break;
      if ((policy.retryOn & outcome) == 0 || attempt >= policy.maxAttempts) break;
      if (fault.retryAfter && givesUpOn(policy, *fault.retryAfter)) break;
      const Usec now = sentAt + *length;
      const Usec backoff = backoffDelay(policy, attempt, state, rng);
      const auto honoured = fault.retryAfter ? honouredRetryAfter(policy, *fault.retryAfter) : std::nullopt;
      const Usec next = now + combineWithRetryAfter(policy, backoff, honoured);
      if (policy.deadline && next >= *policy.deadline) break;
      sentAt = next;
      if (out.offsets.size() < static_cast<std::size_t>(attempt)) out.offsets.resize(static_cast<std::size_t>(attempt));
      out.offsets[static_cast<std::size_t>(attempt - 1)].push_back(toSeconds(sentAt));
    }
    out.attemptsPerOperation.push_back(attempt);
  }
  return out;
}

std::int64_t retriesUnderSharedBudget(const Policy& policy, const FaultSpec& fault, int operations, int clients) {
  // Every operation fails each attempt at once; they run in lock step (attempt by attempt), the
  // way a burst of failures reaches one client object in the same moment.
  clients = std::max(1, std::min(clients, operations));
  std::vector<RetryBudget> budgets(static_cast<std::size_t>(clients), RetryBudget(policy.budget));
  const unsigned outcome = outcomeOf(fault);
  if ((policy.retryOn & outcome) == 0) return 0;
  std::vector<bool> alive(static_cast<std::size_t>(operations), true);
  std::int64_t retries = 0;
  for (int attempt = 1; attempt < policy.maxAttempts; ++attempt) {
    for (int i = 0; i < operations; ++i) {
      if (!alive[static_cast<std::size_t>(i)]) continue;
      RetryBudget& b = budgets[static_cast<std::size_t>(i % clients)];
      b.onQualifiedFailure();
      double cost = 0;
      if (b.tryAcquire(0, fault.kind == FaultSpec::Kind::Timeout, &cost)) {
        ++retries;
      } else {
        alive[static_cast<std::size_t>(i)] = false;
      }
    }
  }
  return retries;
}

}  // namespace idem::sim
