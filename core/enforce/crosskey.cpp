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
  check.confirmed = tier.crossKey.mode == policy::CrossKeyMode::Hold && duplicateConfirmed(headers);
  return check;
}

trace::Outcome crossKeyOutcome(const store::ClaimResult& claim, const store::CrossKeyCheck& check,
                               const policy::CrossKey& tier) {
  if (claim.decision == store::Decision::Duplicate)
    return tier.mode == policy::CrossKeyMode::Reject ? trace::Outcome::DuplicateRejected : trace::Outcome::DuplicateHeld;
  return check.confirmed ? trace::Outcome::DuplicateConfirmed : trace::Outcome::DuplicateObserved;
}

std::string matchDetail(const store::CrossKeyMatch& match, long long nowMs, const policy::CrossKey& tier) {
  std::string out = "matches key " + match.key;
  std::string about;
  if (match.resource) about = *match.resource;
  if (match.state == "done" && match.status != 0) about += (about.empty() ? "" : ", ") + std::to_string(match.status);
  else if (match.state == "processing") about += (about.empty() ? "" : ", ") + std::string("still running");
  if (!about.empty()) out += " (" + about + ")";
  const auto gap = std::chrono::milliseconds(std::max(0LL, nowMs - match.at));
  out += ", executed " + text::humanDuration(gap) + " earlier with the same request; window " +
         policy::formatDuration(tier.window);
  return out;
}

Response duplicateProblem(const store::CrossKeyMatch& match, long long nowMs, const policy::CrossKey& tier,
                          std::string_view docsUrl, std::string_view key) {
  const bool held = tier.mode != policy::CrossKeyMode::Reject;
  std::string detail = "This request " + matchDetail(match, nowMs, tier) + ", under another Idempotency-Key. " +
                       "Nothing was executed. A retry of that request should reuse its key (" + match.key + ")";
  detail += held ? std::string("; if a second, identical operation is meant, resend with the header ") +
                       policy::kDuplicateConfirmedHeader + ": ?1."
                 : ". This operation refuses such duplicates inside the window.";
  return makeProblem(held ? Problem::SuspectedDuplicate : Problem::DuplicateRejected, docsUrl, detail, key);
}

}  // namespace idem::enforce
