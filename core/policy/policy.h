#pragma once
// The policy file (docs/design.md §4): tiers of routes with their TTL, lease and behaviour.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/fingerprint/fingerprint.h"
#include "core/policy/amount.h"
#include "core/policy/duration.h"

namespace idem::policy {

enum class OnExpired { Execute, Reject };
/// What a retry does once it took over the key of a holder that stopped (its lease ran out). A
/// front whose work commits with the key (serve) ran nothing for the stopped holder and executes
/// again; a proxy cannot know whether the stopped holder's request reached its service, so it
/// answers "outcome unknown" and stores that. FrontDecides: the tier names neither.
enum class OnTakeover { FrontDecides, Execute, OutcomeUnknown };
/// How far a tier's routes are enforced (docs/policy.md, "Rollout"): a path from putting Idem in
/// front of an existing API to enforcing it.
enum class Rollout {
  Observe,      // "observe": never refuses or replays; records what enforcement would have done
  WhenPresent,  // "when-present": a key is honoured when sent; a request without one passes
  Required,     // "required": a request without a key is refused with 400 (the default)
};
enum class CacheRule { AfterStart, SuccessOnly };  // "after-start" | "2xx-only"
/// What a tier asks of the store's replication: "any", or "synchronous" (an acknowledged key
/// survives a failover to a synchronous standby).
enum class DurabilityNeed { Any, Synchronous };
/// What a tier that needs synchronous durability does on a store that does not give it.
enum class OnWeakerStore { Refuse, Warn };  // "refuse": 503 on its routes | "warn": log, metric, /healthz

/// Duplicates across keys (docs/policy.md, "Duplicates across keys"): what a tier does with a new
/// key whose request matches another key's execution (same tenant, route and fingerprint) inside
/// the window. A client that means a second, identical operation says so with
/// kDuplicateConfirmedHeader.
enum class CrossKeyMode {
  Off,      // "off": no look (the default; the tier pays nothing)
  Observe,  // "observe": executes, and records the match (trace, metrics, console)
  Hold,     // "hold": 409 #suspected-duplicate naming the earlier execution; a confirmed resend runs
  Reject,   // "reject": 409 #duplicate-rejected; confirming does not help
};
struct CrossKey {
  CrossKeyMode mode = CrossKeyMode::Off;
  Millis window{0};
  [[nodiscard]] bool on() const { return mode != CrossKeyMode::Off; }
  /// A match is answered instead of executed (unless confirmed, under hold).
  [[nodiscard]] bool blocks() const { return mode == CrossKeyMode::Hold || mode == CrossKeyMode::Reject; }
};
/// The header a client sends, as an RFC 9651 boolean (`?1`), to say a request that looks like
/// an earlier one under another key is meant as a second operation.
inline constexpr const char* kDuplicateConfirmedHeader = "Idempotency-Duplicate-Confirmed";

struct OnConflict {
  bool wait = false;   // "409" -> false; "wait:2s" -> true
  Millis waitFor{0};
};

struct Tier {
  std::string name;
  /// "POST /v1/payments", or a template "POST /v1/orders/{id}/capture" (core/policy/route_template.h);
  /// canonical spelling.
  std::vector<std::string> routes;
  /// `key_required: false` in a policy file is `when-present`; `true` is `required`.
  Rollout rollout = Rollout::Required;
  /// A request without a key is refused (only under `required`).
  [[nodiscard]] bool keyRequired() const { return rollout == Rollout::Required; }
  /// Decisions are recorded, never enforced (`observe`).
  [[nodiscard]] bool observed() const { return rollout == Rollout::Observe; }
  Millis ttl{std::chrono::hours(24)};
  /// How long a key stays with an executor that stopped renewing it (it died); shorter than ttl.
  Millis lease{std::chrono::seconds(30)};
  OnExpired onExpired = OnExpired::Execute;
  OnTakeover onTakeover = OnTakeover::FrontDecides;
  OnConflict onConflict;
  CacheRule cache = CacheRule::AfterStart;
  fp::Spec fingerprint;
  Millis archiveRetention{std::chrono::hours(24 * 400)};
  /// How long an archived generation keeps its stored response body (it may hold personal
  /// data); the row itself stays for archiveRetention. Absent: the body stays as long as the row.
  std::optional<Millis> bodyRetention;
  std::map<std::string, Millis> referenceWindows;  // "channel_retry" -> 72h
  std::vector<std::string> replayHeaders;          // allow-list; defaults when absent
  DurabilityNeed durability = DurabilityNeed::Any;
  OnWeakerStore onWeakerStore = OnWeakerStore::Refuse;
  /// Where each route's stored response says how much was charged (core/policy/amount.h);
  /// empty when the policy names none.
  AmountPaths amount;
  CrossKey crossKey;
};

/// Replayed headers when a tier names none. Never Set-Cookie or Date.
[[nodiscard]] const std::vector<std::string>& defaultReplayHeaders();

/// The policy file's spelling of each behaviour: "execute" | "reject".
[[nodiscard]] std::string_view onExpiredName(OnExpired e);
/// "execute" | "outcome_unknown" | "" (FrontDecides).
[[nodiscard]] std::string_view onTakeoverName(OnTakeover t);
/// "observe" | "when-present" | "required".
[[nodiscard]] std::string_view rolloutName(Rollout r);
/// "after-start" | "2xx-only".
[[nodiscard]] std::string_view cacheRuleName(CacheRule c);
/// "any" | "synchronous".
[[nodiscard]] std::string_view durabilityNeedName(DurabilityNeed d);
/// "refuse" | "warn".
[[nodiscard]] std::string_view onWeakerStoreName(OnWeakerStore o);
/// "409" | "wait:2s".
[[nodiscard]] std::string onConflictName(const OnConflict& c);
[[nodiscard]] std::string_view crossKeyModeName(CrossKeyMode m);

struct Policy {
  std::string docsUrl;
  /// The header a gateway sets to the authenticated tenant (serve and proxy read it; a library
  /// caller passes the tenant itself). Empty: a single-tenant deployment. "Authorization" with
  /// tenantFromAuthorization (policy/tenantsource.h).
  std::string tenantHeader;
  /// The tenant is a digest of the request's Authorization value (tenant_from_authorization):
  /// no gateway needed, and different credentials never share keys.
  bool tenantFromAuthorization = false;
  /// A request without a tenant: refused with 400 (true; the default when tenantHeader is set),
  /// or scoped to defaultTenant (false; the default without tenantHeader).
  bool tenantRequired = false;
  std::string defaultTenant;
  std::vector<Tier> tiers;
  std::string source;        // the file it came from, for messages
  nlohmann::json document;   // as written (comments stripped)

  /// The tier covering a request and the route it matched (the policy's canonical spelling,
  /// which is the key scope's endpoint). The path is normalised first (core/policy/route.h); an
  /// exact route beats any template, and among templates the most specific wins.
  struct Match {
    const Tier* tier = nullptr;
    std::string_view route;  // "POST /v1/payments" or "POST /v1/orders/{id}"; empty when no tier matched
    std::string request;     // the request as matched, "POST /v1/orders/123"; empty when no tier matched
    /// The route is a template: one key scope spans many request paths, so the request's own
    /// path belongs in its fingerprint (docs/policy.md, "Routes").
    bool templated = false;
  };
  [[nodiscard]] Match match(std::string_view method, std::string_view path) const;
  /// The tier covering "METHOD /path" (any spelling of it), or nullptr.
  [[nodiscard]] const Tier* tierFor(std::string_view method, std::string_view path) const {
    return match(method, path).tier;
  }
  [[nodiscard]] const Tier* tierNamed(std::string_view name) const;
  /// Where tenants come from, in words ("header X-Tenant-Id", "authorization digest", "single
  /// tenant"); "" when the policy declares no source (policy/tenantsource.h).
  [[nodiscard]] std::string tenantSource() const;
  /// Hex SHA-256 of the canonical document: identifies this policy in the store.
  [[nodiscard]] std::string sha256() const;
};

/// A policy file that cannot be used. what() has one line per problem, each naming the file,
/// where in it and the field, e.g. "policy.json: line 7, column 14: tiers[0].ttl: \"24x\" is not
/// a duration (use 250ms, 2s, 30m, 24h or 30d)"; problems() has them one by one.
class PolicyError : public std::runtime_error {
 public:
  struct Problem {
    std::string field;    // "tiers[0].ttl"; empty for the document as a whole
    std::string message;  // what is wrong and what to write instead
    std::size_t line = 0, column = 0;  // 1-based; 0 when not known
  };
  using std::runtime_error::runtime_error;
  PolicyError(const std::string& what, std::vector<Problem> problems)
      : std::runtime_error(what), m_problems(std::move(problems)) {}
  [[nodiscard]] const std::vector<Problem>& problems() const noexcept { return m_problems; }

 private:
  std::vector<Problem> m_problems;
};

/// Parses and validates policy text (JSON with // and /* */ comments). Unknown fields, bad
/// values, duplicate tier names, a route in two tiers and two templates matching the same
/// requests are errors; every one in the file is reported at once (a JSON syntax error stops
/// at the first).
[[nodiscard]] Policy parsePolicy(std::string_view text, const std::string& source);
/// Reads and parses a policy file. Throws PolicyError (also when the file cannot be read).
[[nodiscard]] Policy loadPolicyFile(const std::string& path);

/// The published policy (draft §2.3) as JSON: per tier its routes, TTL, lease, behaviours.
/// frontTakeover: what a tier without `on_takeover` does on this front (published resolved).
[[nodiscard]] nlohmann::json publishedJson(const Policy& policy, OnTakeover frontTakeover = OnTakeover::Execute);
/// The same as a small self-contained HTML page; `service`, when given, names whose policy it is
/// (several services may share one store: docs/store.md, "Services").
[[nodiscard]] std::string publishedHtml(const Policy& policy, std::string_view service = {},
                                        OnTakeover frontTakeover = OnTakeover::Execute);

}  // namespace idem::policy
