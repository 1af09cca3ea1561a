#include "core/sim/policytext.h"

#include <sstream>
#include <vector>

namespace idem::sim {

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

std::string retriedOutcomes(unsigned retryOn) {
  std::vector<std::string> items;
  if (retryOn & kTimeout) items.emplace_back("timeouts");
  if (retryOn & kConnectionError) items.emplace_back("connection errors");
  if (retryOn & kConflict409) items.emplace_back("409");
  if (retryOn & kStatus500) items.emplace_back("500");
  if (retryOn & kStatus503) items.emplace_back("503");
  return joined(items);
}

std::string multiplierText(double m) {
  std::ostringstream o;
  o << m;
  return o.str();
}

std::string backoffText(const Policy& p) {
  std::string out;
  switch (p.backoff) {
    case Backoff::None:
      return "no sleep between attempts";
    case Backoff::Constant:
      out = "a constant " + formatDuration(p.base) + " sleep";
      break;
    case Backoff::Linear:
      out = "linear backoff of " + formatDuration(p.base) + " per retry";
      break;
    case Backoff::Exponential:
      out = "exponential backoff from " + formatDuration(p.base) + " ×" + multiplierText(p.multiplier);
      break;
  }
  if (p.backoff != Backoff::Constant) out += p.cap ? ", capped at " + formatDuration(*p.cap) : ", uncapped";
  switch (p.jitter) {
    case Jitter::None:
      out += ", no jitter";
      break;
    case Jitter::Full:
      out += ", full jitter";
      break;
    case Jitter::Equal:
      out += ", equal jitter";
      break;
    case Jitter::Decorrelated:
      out += ", decorrelated jitter";
      break;
  }
  return out;
}

std::string retryAfterText(const Policy& p) {
  const std::string cap = p.retryAfterCap ? " (up to " + formatDuration(*p.retryAfterCap) + ")" : "";
  switch (p.retryAfter) {
    case RetryAfterMode::Ignore:
      return "ignores Retry-After";
    case RetryAfterMode::Max:
      return "waits at least Retry-After" + cap;
    case RetryAfterMode::Replace:
      return "sleeps exactly Retry-After when sent" + cap;
  }
  return {};
}

}  // namespace

std::string describePolicy(const Policy& p) {
  std::vector<std::string> parts;
  parts.push_back(std::to_string(p.maxAttempts) + (p.maxAttempts == 1 ? " attempt" : " attempts"));
  if (p.maxAttempts <= 1 || p.retryOn == 0) {
    parts.emplace_back("never retries");
  } else {
    parts.push_back("retries on " + retriedOutcomes(p.retryOn));
    parts.push_back(backoffText(p));
    if (p.firstRetryImmediate) parts.emplace_back("first retry at once");
    if (p.minDelay > 0) parts.push_back("never sleeps below " + formatDuration(p.minDelay));
    parts.push_back(retryAfterText(p));
  }
  parts.push_back(p.timeout ? formatDuration(*p.timeout) + " per-attempt timeout" : "no per-attempt timeout");
  if (p.deadline) parts.push_back(formatDuration(*p.deadline) + " overall deadline");
  switch (p.budget.type) {
    case Budget::Type::None:
      parts.emplace_back("no retry budget");
      break;
    case Budget::Type::TokenBucket:
      parts.emplace_back(p.budget.style == Budget::Style::Aws ? "an AWS-style retry quota"
                                                              : "a gRPC-style token bucket");
      break;
    case Budget::Type::Ratio:
      parts.emplace_back("a retry ratio budget");
      break;
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out + ".";
}

}  // namespace idem::sim
