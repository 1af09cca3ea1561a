#include "core/enforce/crosskey.h"

#include <algorithm>
#include <chrono>

#include "core/policy/duration.h"
#include "core/text/humanduration.h"

namespace idem::enforce {

bool duplicateConfirmed(const http::Headers& headers) {
  const auto value = http::findHeader(headers, policy::kDuplicateConfirmedHeader);
  if (!value) return false;
  std::string_view v = *value;
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v == "?1" || v.starts_with("?1;");
}

std::optional<store::CrossKeyCheck> crossKeyCheck(const policy::Tier& tier, const http::Headers& headers) {
  if (!tier.crossKey.on()) return std::nullopt;
  store::CrossKeyCheck check;
  check.window = tier.crossKey.window;
  check.blocks = tier.crossKey.blocks() && !tier.observed();
  check.rejects = check.blocks && tier.crossKey.mode == policy::CrossKeyMode::Reject;
  check.confirmed = tier.crossKey.mode == policy::CrossKeyMode::Hold && duplicateConfirmed(headers);
  return check;
}

trace::Outcome crossKeyOutcome(const store::ClaimResult& claim, const store::CrossKeyCheck& check,
                               const policy::CrossKey& tier) {
  if (claim.decision == store::Decision::Duplicate)
    return tier.mode == policy::CrossKeyMode::Reject ? trace::Outcome::DuplicateRejected : trace::Outcome::DuplicateHeld;
  return check.confirmed ? trace::Outcome::DuplicateConfirmed : trace::Outcome::DuplicateObserved;
}

namespace {
/// "a1 (pay_X, 201)", "a1 (still running)".
std::string earlierKey(const store::CrossKeyMatch& match) {
  std::string about;
  if (match.resource) about = *match.resource;
  if (match.state == "done" && match.status != 0) about += (about.empty() ? "" : ", ") + std::to_string(match.status);
  else if (match.state == "processing") about += (about.empty() ? "" : ", ") + std::string("still running");
  return about.empty() ? match.key : match.key + " (" + about + ")";
}
std::string ago(const store::CrossKeyMatch& match, long long nowMs) {
  return text::humanDuration(std::chrono::milliseconds(std::max(0LL, nowMs - match.at)));
}
}  // namespace

std::string matchDetail(const store::CrossKeyMatch& match, long long nowMs, const policy::CrossKey& tier) {
  return "matches key " + earlierKey(match) + ", claimed " + ago(match, nowMs) + " earlier; window " +
         policy::formatDuration(tier.window);
}

Response duplicateProblem(const store::CrossKeyMatch& match, long long nowMs, const policy::CrossKey& tier,
                          std::string_view docsUrl, std::string_view key) {
  const bool held = tier.mode != policy::CrossKeyMode::Reject;
  std::string detail = "The same request was sent " + ago(match, nowMs) + " ago under another Idempotency-Key, " +
                       earlierKey(match) + ". Nothing was executed. A retry of that request should reuse its key";
  detail += held ? std::string("; if a second, identical operation is meant, resend this one with the header ") +
                       policy::kDuplicateConfirmedHeader + ": ?1."
                 : ". This operation refuses such duplicates for " + text::humanDuration(tier.window) + ".";
  return makeProblem(held ? Problem::SuspectedDuplicate : Problem::DuplicateRejected, docsUrl, detail, key);
}

}  // namespace idem::enforce
