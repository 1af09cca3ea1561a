// The parsed policy: lookups, names and identity. Parsing is in policy_parse.cpp, the
// published forms in policy_publish.cpp and policy_html.cpp.
#include "core/policy/policy.h"
#include "core/policy/tenantsource.h"

#include "core/policy/route.h"
#include "core/policy/route_template.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace idem::policy {

const std::vector<std::string>& defaultReplayHeaders() {
  // What a client needs to read a replayed response as the original: its type and language,
  // where the created resource is, and its validators. Nothing that belongs to one session
  // (Set-Cookie) or to the moment of sending (Date).
  static const std::vector<std::string> headers{"Content-Type", "Content-Language", "Location",     "Link",
                                                "ETag",         "Last-Modified",    "Cache-Control"};
  return headers;
}

std::string_view onExpiredName(OnExpired e) { return e == OnExpired::Reject ? "reject" : "execute"; }

std::string_view onTakeoverName(OnTakeover t) {
  switch (t) {
    case OnTakeover::Execute: return "execute";
    case OnTakeover::OutcomeUnknown: return "outcome_unknown";
    case OnTakeover::FrontDecides: return "";
  }
  return "";
}

std::string_view rolloutName(Rollout r) {
  switch (r) {
    case Rollout::Observe: return "observe";
    case Rollout::WhenPresent: return "when-present";
    case Rollout::Required: return "required";
  }
  return "required";
}

std::string_view cacheRuleName(CacheRule c) { return c == CacheRule::SuccessOnly ? "2xx-only" : "after-start"; }

std::string_view durabilityNeedName(DurabilityNeed d) { return d == DurabilityNeed::Synchronous ? "synchronous" : "any"; }

std::string_view onWeakerStoreName(OnWeakerStore o) { return o == OnWeakerStore::Warn ? "warn" : "refuse"; }

std::string_view crossKeyModeName(CrossKeyMode m) {
  switch (m) {
    case CrossKeyMode::Off: return "off";
    case CrossKeyMode::Observe: return "observe";
    case CrossKeyMode::Hold: return "hold";
    case CrossKeyMode::Reject: return "reject";
  }
  return "off";
}

std::string onConflictName(const OnConflict& c) { return c.wait ? "wait:" + formatDuration(c.waitFor) : "409"; }

Policy::Match Policy::match(std::string_view method, std::string_view path) const {
  // A parsed policy's routes are canonical already (policy_parse.cpp), so one normalisation of
  // the request's path and comparisons decide. An exact route is the most specific match there
  // is; templates compete by rank (route_template.h), and the parser refused ties.
  auto canonical = canonicalRoute(method, path);
  if (!canonical) return {};
  Match best;
  std::string bestRank;
  for (const auto& tier : tiers)
    for (const std::string_view r : tier.routes) {
      const bool templated = isRouteTemplate(r);
      if (r == *canonical) return {&tier, r, std::move(*canonical), templated};
      if (!templated) continue;
      auto rank = templateRank(r, *canonical);
      if (rank && (best.tier == nullptr || *rank < bestRank)) {
        best = {&tier, r, {}, true};
        bestRank = std::move(*rank);
      }
    }
  if (best.tier != nullptr) best.request = std::move(*canonical);
  return best;
}

const Tier* Policy::tierNamed(std::string_view name) const {
  for (const auto& tier : tiers)
    if (tier.name == name) return &tier;
  return nullptr;
}

std::string Policy::tenantSource() const { return tenantSourceOf(document); }

std::string Policy::sha256() const { return fp::toHex(fp::sha256(fp::canonicalJson(document))); }

Policy loadPolicyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw PolicyError(path + ": cannot read the policy file (" + std::strerror(errno) +
                      "); check the path and that this user may read it");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw PolicyError(path + ": cannot read the policy file (read error)");
  return parsePolicy(text.str(), path);
}

}  // namespace idem::policy
