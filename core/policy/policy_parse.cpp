// Reading a policy file (docs/design.md §4). Every error names the file, the line and column and
// the field path as the file writes it ("tiers[1].on_conflict"), says what is wrong and what to
// write instead. The reader goes on after a problem, field by field, so one run lists them all.
#include <algorithm>
#include <map>
#include <utility>

#include "core/http/headers.h"
#include "core/policy/policy.h"
#include "core/policy/policy_fields.h"
#include "core/policy/policy_json.h"
#include "core/policy/policy_position.h"
#include "core/policy/policy_sameness.h"
#include "core/policy/route.h"
#include "core/policy/route_template.h"

namespace idem::policy {
namespace {

using internal::element;
using internal::member;
using internal::shown;
using internal::typeName;
using nlohmann::json;

// Headers a replay must never copy from the stored response, and why.
struct Refused {
  std::string_view name;
  std::string_view why;
};
constexpr std::string_view kFraming =
    "it describes how one message travels, not the response; the server writes it for every response";
constexpr Refused kRefusedReplayHeaders[] = {
    {"Set-Cookie",
     "replaying it would hand the first caller's cookies (often a session) to whoever retries "
     "with the same key"},
    {"Date", "it must say when a response is sent; every replay gets a fresh Date from the server"},
    {"Content-Length", kFraming},
    {"Transfer-Encoding", kFraming},
    {"Connection", kFraming},
    {"Keep-Alive", kFraming},
    {"Upgrade", kFraming},
    {"Trailer", kFraming},
    {"Idempotent-Replayed", "Idem writes it on every replay"},
    {"Idempotency-Expires", "Idem writes it on every keyed response"},
};

class Reader : public internal::FieldReader {
 public:
  explicit Reader(const std::string& source) : FieldReader(source) {}

  Policy read(const json& doc) {
    if (!doc.is_object())
      fail("", "a policy is a JSON object with \"docs_url\" and \"tiers\", not " + std::string(typeName(doc)));
    attempt([&] {
      internal::rejectUnknown(doc, source(), "",
                              {"docs_url", "tenant_header", "tenant_from_authorization", "single_tenant",
                               "tenant_required", "default_tenant", "tiers"});
    });
    Policy p;
    p.source = source();
    p.document = doc;
    attempt([&] { p.docsUrl = docsUrl(required(doc, "", "docs_url", "the page that explains this policy to clients")); });
    attempt([&] {
      if (const json* v = optional(doc, "tenant_header")) p.tenantHeader = tenantHeader(*v, "tenant_header");
    });
    attempt([&] { tenantSource(doc, p); });
    attempt([&] { tenantChoice(doc, p); });

    const json* tiers = nullptr;
    attempt([&] {
      tiers = &required(doc, "", "tiers", "a list of tiers, each with its routes and TTL");
      if (!tiers->is_array()) fail("tiers", "must be an array of tiers, not " + std::string(typeName(*tiers)));
      if (tiers->empty()) fail("tiers", "must list at least one tier");
    });
    if (tiers == nullptr || !tiers->is_array()) return p;
    std::map<std::string, std::string> nameAt;  // first place each name appears
    RoutesSeen routesSeen;
    for (std::size_t i = 0; i < tiers->size(); ++i) {
      const std::string path = element("tiers", i);
      attempt([&] {
        Tier t = tier((*tiers)[i], path);
        // Not a structured binding: clang 14 (the sanitizer builds) cannot capture one in a lambda.
        const auto named = nameAt.emplace(t.name, path);
        if (!t.name.empty() && !named.second)
          attempt([&] {
            fail(member(path, "name"),
                 shown(t.name) + " is already the name of " + named.first->second + "; tier names must be unique");
          });
        for (std::size_t r = 0; r < t.routes.size(); ++r)
          attempt([&] { onceIn(routesSeen, t.routes[r], routePaths(path)[r], "; a route belongs to exactly one tier"); });
        p.tiers.push_back(std::move(t));
      });
    }
    return p;
  }

  /// Every problem found, in the order of the file; throws them as one PolicyError if any.
  void throwProblems(std::string_view text) {
    if (m_problems.empty()) return;
    const internal::FieldPositions positions(text);
    for (auto& problem : m_problems) {
      const auto at = positions.at(problem.field);
      problem.line = at.line;
      problem.column = at.column;
    }
    std::stable_sort(m_problems.begin(), m_problems.end(), [](const auto& a, const auto& b) {
      return std::pair(a.line, a.column) < std::pair(b.line, b.column);
    });
    std::string what;
    for (const auto& problem : m_problems)
      what += (what.empty() ? "" : "\n") + source() + ": line " + std::to_string(problem.line) + ", column " +
              std::to_string(problem.column) + ": " + (problem.field.empty() ? "" : problem.field + ": ") +
              problem.message;
    throw PolicyError(what, std::move(m_problems));
  }

  /// Runs one check; a problem it finds is noted and reading goes on. False when it found one.
  template <typename Check>
  bool attempt(Check&& check) {
    try {
      check();
      return true;
    } catch (const PolicyError& e) {
      if (e.problems().empty()) m_problems.push_back({"", e.what()});
      for (const auto& problem : e.problems()) m_problems.push_back(problem);
      return false;
    }
  }

 private:
  // Where each route (by its shape: two templates that differ only in parameter names are one
  // route) was first listed, and as what.
  using RoutesSeen = std::map<std::string, std::pair<std::string, std::string>>;

  /// The field path of each route a tier lists as parsed: a route that had a problem is left
  /// out of Tier::routes, so the paths of the kept ones are recorded with them.
  std::vector<std::string>& routePaths(const std::string& tierPath) { return m_routePaths[tierPath]; }

  void onceIn(RoutesSeen& seen, const std::string& route, const std::string& path, std::string_view rule) const {
    auto [it, fresh] = seen.emplace(routeShape(route), std::pair(path, route));
    if (fresh) return;
    if (it->second.second == route) fail(path, shown(route) + " is already listed at " + it->second.first + std::string(rule));
    fail(path, shown(route) + " matches the same requests as " + shown(it->second.second) + " at " + it->second.first +
                   " (they differ only in parameter names)" + std::string(rule));
  }

  std::string docsUrl(const json& v) const {
    std::string url = str(v, "docs_url");
    const bool printable = !url.empty() && std::all_of(url.begin(), url.end(), [](char c) {
      return static_cast<unsigned char>(c) > 0x20 && c != 0x7f;
    });
    const bool followable = url.starts_with("https://") || url.starts_with("http://") || url.starts_with("/");
    if (!printable || !followable)
      fail("docs_url", shown(v) +
                           " is not a link clients can follow (use an http:// or https:// URL, or a path "
                           "starting with /, without spaces)");
    return url;
  }

  std::string tenantHeader(const json& v, const std::string& path) const {
    std::string name = str(v, path);
    if (!name.empty() && !internal::isToken(name))
      fail(path, shown(v) +
                     " is not an HTTP header name (letters, digits and -, no spaces); leave it out for a "
                     "single tenant");
    return name;
  }

  // One source at most: a gateway's header, the request's credentials, or none declared.
  void tenantSource(const json& doc, Policy& p) const {
    const json* fromAuth = optional(doc, "tenant_from_authorization");
    const json* single = optional(doc, "single_tenant");
    const bool fromAuthorization =
        fromAuth && expect(*fromAuth, "tenant_from_authorization", json::value_t::boolean, "true or false").get<bool>();
    const bool singleTenant = single && expect(*single, "single_tenant", json::value_t::boolean, "true or false").get<bool>();
    if (fromAuthorization && !p.tenantHeader.empty())
      fail("tenant_from_authorization", "and tenant_header are two tenant sources; choose one");
    if (singleTenant && (fromAuthorization || !p.tenantHeader.empty()))
      fail("single_tenant", "declares no tenant source, but the policy names one; choose one");
    if (fromAuthorization) {
      p.tenantHeader = "Authorization";
      p.tenantFromAuthorization = true;
    }
  }

  // What a request without a tenant gets is a choice the file makes: with a tenant header
  // such a request is refused unless tenant_required is false; default_tenant names the
  // tenant it then gets ("" unless set).
  void tenantChoice(const json& doc, Policy& p) const {
    p.tenantRequired = !p.tenantHeader.empty();
    if (const json* v = optional(doc, "tenant_required"))
      p.tenantRequired = expect(*v, "tenant_required", json::value_t::boolean, "true or false").get<bool>();
    if (const json* v = optional(doc, "default_tenant")) {
      if (p.tenantRequired)
        fail("default_tenant",
             "is never used while tenant_required is true (requests without a tenant are refused); set "
             "\"tenant_required\": false to give them this tenant");
      p.defaultTenant = str(*v, "default_tenant");
      const bool visible = std::all_of(p.defaultTenant.begin(), p.defaultTenant.end(),
                                       [](char c) { return c > 0x20 && c < 0x7f; });
      if (!visible || p.defaultTenant.size() > 128)
        fail("default_tenant", shown(*v) + " is not a tenant (at most 128 visible ASCII characters)");
    }
  }

  // Each field is read on its own, so a tier with several problems reports them all; a field
  // that another one is checked against (ttl, archive_retention, routes) is compared only when
  // it was read without a problem.
  Tier tier(const json& v, const std::string& path) {
    if (!v.is_object()) fail(path, "a tier must be an object, not " + std::string(typeName(v)) + " (" + shown(v) + ")");
    attempt([&] {
      internal::rejectUnknown(v, source(), path,
                              {"name", "routes", "rollout", "key_required", "ttl", "lease", "on_expired", "on_takeover", "on_conflict", "cache",
                               "fingerprint", "archive_retention", "body_retention", "reference_windows",
                               "replay_headers", "durability", "on_weaker_store", "amount", "cross_key"});
    });
    Tier t;
    attempt([&] { t.name = tierName(required(v, path, "name", "a unique name such as \"payments\""), member(path, "name")); });
    const bool routesRead = attempt([&] {
      t.routes = routes(required(v, path, "routes", "the routes of this tier, e.g. [\"POST /v1/payments\"]"),
                        member(path, "routes"), routePaths(path));
    });
    const bool ttlRead = attempt([&] {
      t.ttl = duration(required(v, path, "ttl", "how long a key is honoured, e.g. \"24h\""), member(path, "ttl"));
    });
    attempt([&] { rollout(v, path, t); });
    // The lease bounds how long a silent executor keeps a key; it must end inside the key's life,
    // or a 409's Retry-After would point past the expiry the policy publishes. Without a lease
    // the default (30s) is shortened to half of a short TTL.
    attempt([&] {
      if (const json* f = optional(v, "lease")) {
        t.lease = duration(*f, member(path, "lease"));
        if (ttlRead && t.lease >= t.ttl)
          fail(member(path, "lease"),
               shown(*f) + " is not shorter than ttl (" + formatDuration(t.ttl) +
                   "): a key is never expired while a lease holds it, so the lease must end well before the key "
                   "does; a lease is how long a silent executor keeps the key (it renews it while it runs)");
      } else {
        t.lease = std::min(t.lease, t.ttl / 2);
      }
    });
    attempt([&] {
      if (const json* f = optional(v, "on_expired")) t.onExpired = onExpired(*f, member(path, "on_expired"));
    });
    attempt([&] {
      if (const json* f = optional(v, "on_takeover")) t.onTakeover = onTakeover(*f, member(path, "on_takeover"));
    });
    attempt([&] {
      if (const json* f = optional(v, "on_conflict")) t.onConflict = onConflict(*f, member(path, "on_conflict"));
    });
    attempt([&] {
      if (const json* f = optional(v, "cache")) t.cache = cacheRule(*f, member(path, "cache"));
    });
    attempt([&] { durability(v, path, t); });
    attempt([&] {
      if (const json* f = optional(v, "fingerprint")) t.fingerprint = internal::readFingerprint(*this, *f, member(path, "fingerprint"));
    });
    const bool archiveRead = attempt([&] {
      if (const json* f = optional(v, "archive_retention"))
        t.archiveRetention = duration(*f, member(path, "archive_retention"));
    });
    attempt([&] {
      if (const json* f = optional(v, "body_retention")) {
        t.bodyRetention = duration(*f, member(path, "body_retention"));
        if (archiveRead && *t.bodyRetention > t.archiveRetention)
          fail(member(path, "body_retention"),
               shown(*f) + " is longer than archive_retention (" + formatDuration(t.archiveRetention) +
                   "): a body cannot outlive its row; leave body_retention out to keep bodies as long as rows");
      }
    });
    attempt([&] {
      if (const json* f = optional(v, "reference_windows"))
        t.referenceWindows = referenceWindows(*f, member(path, "reference_windows"));
    });
    t.replayHeaders = defaultReplayHeaders();
    attempt([&] {
      if (const json* f = optional(v, "replay_headers"))
        t.replayHeaders = replayHeaders(*f, member(path, "replay_headers"));
    });
    attempt([&] {
      if (const json* f = optional(v, "cross_key")) t.crossKey = internal::readCrossKey(*this, *f, member(path, "cross_key"), t.fingerprint);
    });
    attempt([&] {
      if (const json* f = optional(v, "amount"))
        t.amount = amount(*f, member(path, "amount"), routesRead && routePaths(path).size() == t.routes.size()
                                                          ? &t.routes
                                                          : nullptr);
    });
    return t;
  }

  std::string tierName(const json& v, const std::string& path) const {
    std::string name = str(v, path);
    const bool blank = name.find_first_not_of(" \t") == std::string::npos;
    const bool control =
        std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
    if (blank || control || name.front() == ' ' || name.back() == ' ')
      fail(path, shown(v) + " is not a usable tier name (give a short visible name such as \"payments\")");
    return name;
  }

  // Each route is checked on its own; the ones without a problem are kept, with their field
  // paths in `paths` for the checks across tiers.
  std::vector<std::string> routes(const json& v, const std::string& path, std::vector<std::string>& paths) {
    expect(v, path, json::value_t::array, "an array of routes such as [\"POST /v1/payments\"]");
    if (v.empty()) fail(path, "must list at least one route, e.g. [\"POST /v1/payments\"]");
    std::vector<std::string> out;
    RoutesSeen seen;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string at = element(path, i);
      attempt([&] {
        std::string r = route(v[i], at);
        onceIn(seen, r, at, " in this tier (listed twice)");
        out.push_back(std::move(r));
        paths.push_back(at);
      });
    }
    return out;
  }

  // "METHOD /path", the path possibly a template (route_template.h). Anything the template
  // syntax does not understand is refused, never taken as literal text.
  std::string route(const json& v, const std::string& path) const {
    std::string r = str(v, path);
    const auto space = r.find(' ');
    if (space == std::string::npos || space == 0)
      fail(path, shown(v) + " is not a route (write \"METHOD /path\", e.g. \"POST /v1/payments\")");
    const std::string_view method = std::string_view(r).substr(0, space);
    const std::string_view target = std::string_view(r).substr(space + 1);
    if (!std::all_of(method.begin(), method.end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
      fail(path, shown(v) + ": the method must be an upper-case HTTP method, e.g. \"POST /v1/payments\"");
    if (!target.starts_with('/')) fail(path, shown(v) + ": the path must start with '/', e.g. \"POST /v1/payments\"");
    if (target.find_first_of("?#") != std::string_view::npos)
      fail(path, shown(v) + ": leave out the query string; a route matches the path alone");
    if (std::any_of(target.begin(), target.end(),
                    [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; }))
      fail(path, shown(v) + ": the path may not contain spaces or control characters");
    // Kept in canonical form, the form requests are matched in (core/policy/route.h): two
    // spellings of one route are one route, and the canonical one is the keys' endpoint.
    std::string problem;
    const auto canonical = canonicalPathTemplate(target, problem);
    if (!canonical) fail(path, shown(v) + ": " + problem);
    return std::string(method) + " " + *canonical;
  }

  OnExpired onExpired(const json& v, const std::string& path) const {
    const std::string s = str(v, path);
    if (s == "execute") return OnExpired::Execute;
    if (s == "reject") return OnExpired::Reject;
    fail(path, shown(v) +
                   " is not valid (use \"execute\" to run a retry after expiry as a new request, or "
                   "\"reject\" to answer it with 422)");
  }

  OnTakeover onTakeover(const json& v, const std::string& path) const {
    const std::string s = str(v, path);
    if (s == "execute") return OnTakeover::Execute;
    if (s == "outcome_unknown") return OnTakeover::OutcomeUnknown;
    fail(path, shown(v) +
                   " is not valid (use \"execute\" to run a taken-over key again, or \"outcome_unknown\" to store "
                   "and answer that its outcome is not known; without it serve executes and the proxy answers "
                   "outcome unknown)");
  }

  // `key_required` is the older spelling of two rollouts (false: when-present, true: required);
  // both may be written as long as they say the same thing.
  void rollout(const json& v, const std::string& path, Tier& t) const {
    const json* written = optional(v, "rollout");
    if (written != nullptr) {
      const std::string s = str(*written, member(path, "rollout"));
      if (s == "observe")
        t.rollout = Rollout::Observe;
      else if (s == "when-present")
        t.rollout = Rollout::WhenPresent;
      else if (s == "required")
        t.rollout = Rollout::Required;
      else
        fail(member(path, "rollout"),
             shown(*written) +
                 " is not valid (use \"observe\" to record what enforcement would do without refusing anything, "
                 "\"when-present\" to honour a key when one is sent, or \"required\" to refuse requests without "
                 "one)");
    }
    const json* required = optional(v, "key_required");
    if (required == nullptr) return;
    const bool keyRequired =
        expect(*required, member(path, "key_required"), json::value_t::boolean, "true or false").get<bool>();
    const Rollout meant = keyRequired ? Rollout::Required : Rollout::WhenPresent;
    if (written == nullptr) {
      t.rollout = meant;
      return;
    }
    if (t.rollout != meant)
      fail(member(path, "key_required"),
           std::string(keyRequired ? "true" : "false") + " contradicts \"rollout\": " + shown(*written) +
               " (key_required " + (keyRequired ? "true" : "false") + " means \"" + std::string(rolloutName(meant)) +
               "\"); keep only \"rollout\"");
  }

  OnConflict onConflict(const json& v, const std::string& path) const {
    const std::string s = str(v, path);
    if (s == "409") return {};
    if (s.starts_with("wait:")) {
      const json d = s.substr(5);
      return OnConflict{true, duration(d, path)};
    }
    fail(path, shown(v) + " is not valid (use \"409\" or \"wait:<duration>\", e.g. \"wait:2s\")");
  }

  CacheRule cacheRule(const json& v, const std::string& path) const {
    const std::string s = str(v, path);
    if (s == "after-start") return CacheRule::AfterStart;
    if (s == "2xx-only") return CacheRule::SuccessOnly;
    fail(path, shown(v) +
                   " is not valid (use \"after-start\" to store every response once processing began, or "
                   "\"2xx-only\" to store successes only)");
  }

  // on_weaker_store is a choice only a tier that asks for synchronous durability makes.
  void durability(const json& v, const std::string& path, Tier& t) const {
    if (const json* f = optional(v, "durability")) {
      const std::string s = str(*f, member(path, "durability"));
      if (s == "synchronous")
        t.durability = DurabilityNeed::Synchronous;
      else if (s != "any")
        fail(member(path, "durability"),
             shown(*f) + " is not valid (use \"synchronous\" for a tier whose acknowledged keys must survive a "
                         "failover, or \"any\")");
    }
    if (const json* f = optional(v, "on_weaker_store")) {
      const std::string s = str(*f, member(path, "on_weaker_store"));
      if (s == "warn")
        t.onWeakerStore = OnWeakerStore::Warn;
      else if (s != "refuse")
        fail(member(path, "on_weaker_store"),
             shown(*f) + " is not valid (use \"refuse\" to answer 503 on this tier's routes while the store does "
                         "not give synchronous durability, or \"warn\" to serve them and say so)");
      if (t.durability != DurabilityNeed::Synchronous)
        fail(member(path, "on_weaker_store"),
             "is never used unless durability is \"synchronous\"; add \"durability\": \"synchronous\" or leave "
             "it out");
    }
  }

  std::vector<std::string> replayHeaders(const json& v, const std::string& path) const {
    std::vector<std::string> names = headerNames(v, path);
    // The enforcer reads an empty list as "the defaults"; refusing [] keeps the file, the
    // published policy and the behaviour saying the same thing.
    if (names.empty()) {
      std::string defaults;
      for (const auto& h : defaultReplayHeaders()) defaults += (defaults.empty() ? "" : ", ") + h;
      fail(path, "must list at least one header; leave it out to replay the defaults (" + defaults + ")");
    }
    for (std::size_t i = 0; i < names.size(); ++i)
      for (const auto& refused : kRefusedReplayHeaders)
        if (http::equalsIgnoreCase(names[i], refused.name))
          fail(element(path, i), shown(names[i]) + " is never replayed: " + std::string(refused.why));
    return names;
  }

  // `routes`: the tier's routes, or nullptr when some could not be read (nothing to check against).
  AmountPaths amount(const json& v, const std::string& path, const std::vector<std::string>* routes) const {
    AmountPaths a = parseAmountPaths(v, source(), path);
    for (const auto& [route, spec] : a.byRoute)
      if (routes != nullptr && std::find(routes->begin(), routes->end(), route) == routes->end())
        fail(member(path, route), "is not one of this tier's routes; name the amount where the route is listed");
    return a;
  }

  std::map<std::string, Millis> referenceWindows(const json& v, const std::string& path) const {
    expect(v, path, json::value_t::object, "an object of names and durations, e.g. {\"channel_retry\": \"72h\"}");
    std::map<std::string, Millis> out;
    for (const auto& [name, d] : v.items()) {
      if (name.empty()) fail(path, "a reference window needs a name, e.g. \"channel_retry\"");
      out.emplace(name, duration(d, member(path, name)));
    }
    return out;
  }

  std::vector<PolicyError::Problem> m_problems;
  std::map<std::string, std::vector<std::string>> m_routePaths;  // by tier path
};

}  // namespace

Policy parsePolicy(std::string_view text, const std::string& source) {
  Reader reader(source);
  json doc;
  try {
    doc = internal::parseJsonText(text, source);
  } catch (const PolicyError& e) {
    if (e.problems().empty()) throw;  // a syntax error: its message says where already
    reader.attempt([&] { throw e; });  // a member written twice: said with its line like the rest
    reader.throwProblems(text);
  }
  Policy policy;
  reader.attempt([&] { policy = reader.read(doc); });
  reader.throwProblems(text);
  return policy;
}

}  // namespace idem::policy
