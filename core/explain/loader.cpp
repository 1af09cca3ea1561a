#include "core/explain/loader.h"

#include <algorithm>
#include <map>

#include "core/explain/search.h"
#include "core/policy/route.h"
#include "core/policy/route_template.h"
#include "core/store/transaction.h"

namespace idem::explain {
namespace {

// Timestamps travel as microseconds since the epoch, so no session time zone or DateStyle
// can change what is read; isoUtc() writes them back in UTC.
#define IDEM_US(col) "(extract(epoch FROM " col ") * 1000000)::bigint"

constexpr const char* kGenerationsSql =
    "SELECT g.live, g.generation, g.tier, g.policy_version, encode(g.fingerprint, 'hex') AS fp, g.state,"
    "       g.resp_status, g.resource_ref, g.request_id, g.body_dropped_at IS NOT NULL AS body_dropped,"
    "       " IDEM_US("g.body_dropped_at") " AS body_dropped_us,"
    "       CASE WHEN $4::boolean THEN g.resp_headers::text END AS headers, CASE WHEN $4::boolean THEN g.resp_body END AS resp_body,"
    "       " IDEM_US("g.created_at") " AS created_us, " IDEM_US("g.completed_at") " AS completed_us,"
    "       " IDEM_US("g.expires_at") " AS expires_us, " IDEM_US("g.lease_until") " AS lease_us,"
    "       " IDEM_US("g.archived_at") " AS archived_us, g.archived_by, " IDEM_US("g.purge_after") " AS purge_us,"
    "       p.version AS p_version, " IDEM_US("p.effective_at") " AS p_effective_us, p.sha256 AS p_sha256,"
    "       (SELECT t::text FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p.document -> 'tiers') = 'array'"
    "                                                     THEN p.document -> 'tiers' ELSE '[]'::jsonb END) AS t"
    "         WHERE t ->> 'name' = g.tier LIMIT 1) AS p_tier"
    "  FROM (SELECT true AS live, generation, tier, policy_version, fingerprint, state, resp_status, resource_ref,"
    "               request_id, created_at, completed_at, expires_at, lease_until, NULL::timestamptz AS archived_at,"
    "               NULL::text AS archived_by, NULL::timestamptz AS purge_after,"
    "               NULL::timestamptz AS body_dropped_at, resp_headers, resp_body"
    "          FROM idem.keys WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3 AND service = $5"
    "        UNION ALL"
    "        SELECT false, generation, tier, policy_version, fingerprint, state, resp_status, resource_ref,"
    "               request_id, created_at, completed_at, expires_at, NULL, archived_at, archived_by, purge_after,"
    "               body_dropped_at, resp_headers, resp_body"
    "          FROM idem.key_archive WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3 AND service = $5) AS g"
    "  LEFT JOIN LATERAL ("
    "        SELECT version, effective_at, sha256, document FROM idem.policies pp"
    "         WHERE CASE WHEN g.policy_version IS NOT NULL THEN pp.version = g.policy_version"
    "                    ELSE pp.effective_at <= g.created_at END"
    "         ORDER BY pp.effective_at DESC, pp.version DESC LIMIT 1) AS p ON true"
    " ORDER BY g.generation, g.live";

#define IDEM_EVENT_COLUMNS                                                                             \
  "SELECT id, idem_key, " IDEM_US("at") " AS at_us, outcome, generation, status, latency_ms, request_id, detail," \
  "       encode(fingerprint, 'hex') AS fp, repeats, " IDEM_US("last_at") " AS last_at_us, related_key"

constexpr const char* kEventsSql =
    IDEM_EVENT_COLUMNS
    "  FROM idem.events WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3 AND service = $4"
    " ORDER BY at, id";

// Later keys whose request matched this key's execution: their rows name this key. Served by
// the partial index events_related (0026): `related_key = $3` implies its predicate, and
// cross-key rows are few.
constexpr const char* kMatchedLaterSql =
    IDEM_EVENT_COLUMNS
    "  FROM idem.events WHERE related_key = $3 AND tenant = $1 AND endpoint = $2 AND service = $4"
    " ORDER BY at, id";

// The scopes where `key` appears only in cross-key rows: a request held or refused as another
// key's duplicate stores no generation (the events_related index again).
constexpr const char* kCrossKeyScopesSql =
    "SELECT DISTINCT tenant, endpoint, service FROM idem.events"
    " WHERE idem_key = $1 AND related_key IS NOT NULL ORDER BY 1, 2, 3";

#undef IDEM_EVENT_COLUMNS

#undef IDEM_US

std::optional<long long> optInt(const pg::Result& r, int row, const char* name) {
  if (r.isNull(row, r.column(name))) return std::nullopt;
  return r.integer(row, name);
}

std::optional<int> optInt32(const pg::Result& r, int row, const char* name) {
  auto v = optInt(r, row, name);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

std::optional<Instant> optInstant(const pg::Result& r, int row, const char* name) {
  auto v = optInt(r, row, name);
  return v ? std::optional<Instant>(Instant{*v}) : std::nullopt;
}

Instant instant(const pg::Result& r, int row, const char* name) { return Instant{r.integer(row, name)}; }

Generation readGeneration(const pg::Result& g, int i, bool responses) {
  Generation gen;
  gen.live = g.boolean(i, "live");
  gen.number = static_cast<int>(g.integer(i, "generation"));
  gen.tier = g.str(i, "tier");
  gen.policyVersion = optInt32(g, i, "policy_version");
  gen.fingerprintHex = g.str(i, "fp");
  gen.state = g.str(i, "state");
  gen.status = optInt32(g, i, "resp_status");
  gen.resourceRef = g.optStr(i, "resource_ref");
  gen.requestId = g.optStr(i, "request_id");
  gen.bodyDropped = g.boolean(i, "body_dropped");
  gen.bodyDroppedAt = optInstant(g, i, "body_dropped_us");
  if (responses) {
    gen.headersJson = g.optStr(i, "headers").value_or("");
    gen.body = g.bytes(i, "resp_body");
  }
  gen.createdAt = instant(g, i, "created_us");
  gen.completedAt = optInstant(g, i, "completed_us");
  gen.expiresAt = instant(g, i, "expires_us");
  gen.leaseUntil = optInstant(g, i, "lease_us");
  gen.archivedAt = optInstant(g, i, "archived_us");
  gen.archivedBy = g.optStr(i, "archived_by").value_or("");
  gen.purgeAfter = optInstant(g, i, "purge_us");
  if (auto version = optInt32(g, i, "p_version")) {
    PolicyInForce p;
    p.version = *version;
    p.effectiveAt = instant(g, i, "p_effective_us");
    p.sha256 = g.str(i, "p_sha256");
    p.recorded = gen.policyVersion.has_value();
    if (auto tier = g.optStr(i, "p_tier")) p.tier = nlohmann::json::parse(*tier, nullptr, false);
    if (p.tier.is_discarded()) p.tier = nullptr;
    gen.policy = std::move(p);
  }
  return gen;
}

Event readEvent(const pg::Result& e, int i) {
  Event ev;
  ev.id = e.integer(i, "id");
  ev.at = instant(e, i, "at_us");
  ev.outcome = e.str(i, "outcome");
  ev.generation = optInt32(e, i, "generation");
  ev.status = optInt32(e, i, "status");
  if (!e.isNull(i, e.column("latency_ms"))) ev.latencyMs = e.real(i, "latency_ms");
  ev.requestId = e.optStr(i, "request_id");
  ev.detail = e.optStr(i, "detail");
  ev.fingerprintHex = e.optStr(i, "fp").value_or("");
  ev.repeats = static_cast<int>(e.integer(i, "repeats"));
  if (!e.isNull(i, e.column("last_at_us"))) ev.lastAt = instant(e, i, "last_at_us");
  ev.relatedKey = e.optStr(i, "related_key");
  return ev;
}

// The other keys' generations, each key read once (a storm of held repeats names one key often).
class OtherKeys {
 public:
  OtherKeys(pg::Connection& conn, const Scope& scope) : m_conn(conn), m_scope(scope) {}

  // The generation a match concerns: the one `generation` names, else the latest created by
  // `before` (the earlier key's execution that the later request matched).
  std::optional<Generation> generation(const std::string& key, std::optional<int> number, Instant before) {
    auto [it, fresh] = m_read.try_emplace(key);
    if (fresh) {
      auto r = m_conn.exec(kGenerationsSql, {m_scope.tenant, m_scope.endpoint, key, "false", m_scope.service});
      for (int i = 0; i < r.rows(); ++i) it->second.push_back(readGeneration(r, i, false));
    }
    std::optional<Generation> found;
    for (const Generation& g : it->second)
      if (number ? g.number == *number : g.createdAt <= before) found = g;
    return found;
  }

 private:
  pg::Connection& m_conn;
  const Scope& m_scope;
  std::map<std::string, std::vector<Generation>> m_read;
};

// Both sides of the duplicates across keys this key takes part in (history.h, CrossKeyMatch).
void loadCrossKey(pg::Connection& conn, KeyHistory& h) {
  OtherKeys others(conn, h.scope);
  for (const Event& e : h.events) {
    if (!e.relatedKey) continue;
    CrossKeyMatch m{true, e, *e.relatedKey, others.generation(*e.relatedKey, std::nullopt, e.at)};
    h.crossKey.push_back(std::move(m));
  }
  auto later = conn.exec(kMatchedLaterSql, {h.scope.tenant, h.scope.endpoint, h.key, h.scope.service});
  for (int i = 0; i < later.rows(); ++i) {
    Event e = readEvent(later, i);
    const std::string laterKey = later.str(i, "idem_key");
    // A held request stores no generation; one that ran is the event's generation.
    auto generation = e.generation.value_or(0) > 0 ? others.generation(laterKey, e.generation, e.at) : std::nullopt;
    CrossKeyMatch m{false, e, laterKey, std::move(generation)};
    h.crossKey.push_back(std::move(m));
  }
  std::stable_sort(h.crossKey.begin(), h.crossKey.end(),
                   [](const CrossKeyMatch& a, const CrossKeyMatch& b) { return a.event.at < b.event.at; });
}

// The scopes of a search's matches, each once, sorted.
std::vector<KeyRef> refs(const std::vector<KeyMatch>& matches) {
  std::vector<KeyRef> out;
  for (const auto& m : matches) out.push_back(m.ref);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string listScopes(const std::vector<KeyRef>& refs, bool withKey) {
  std::string out;
  for (const auto& r : refs) out += "\n  " + r.scope.label() + (withKey ? "  (key " + r.key + ")" : "");
  return out;
}

}  // namespace

namespace {

// A scope written with the path the client sent ("POST /v1/orders/123/capture") for a key
// stored under its route template ("POST /v1/orders/{id}/capture"): the key's scopes in the
// tenant whose template matches that path, the most specific template only (per service), as
// the policy chose it. The key-first indexes of both tables find the key's few rows.
std::vector<KeyRef> findUnderTemplate(pg::Connection& conn, const std::string& key, const Scope& scope,
                                      const std::optional<std::string>& service) {
  const auto space = scope.endpoint.find(' ');
  if (space == std::string::npos) return {};
  const auto requested = policy::canonicalRoute(scope.endpoint.substr(0, space), scope.endpoint.substr(space + 1));
  if (!requested) return {};
  auto r = conn.exec(
      "SELECT endpoint, service FROM idem.keys WHERE idem_key = $1 AND tenant = $2"
      " UNION SELECT endpoint, service FROM idem.key_archive WHERE idem_key = $1 AND tenant = $2 ORDER BY 1, 2",
      {key, scope.tenant});
  // Each service's policy chose for its own keys: the most specific template per service.
  std::map<std::string, std::pair<std::string, std::vector<KeyRef>>> bestByService;
  for (int i = 0; i < r.rows(); ++i) {
    const std::string endpoint = r.str(i, "endpoint"), inService = r.str(i, "service");
    if (!policy::isRouteTemplate(endpoint) || (service && *service != inService)) continue;
    const auto rank = policy::templateRank(endpoint, *requested);
    if (!rank) continue;
    auto& [best, refs] = bestByService[inService];
    if (refs.empty() || *rank < best) {
      refs.clear();
      best = *rank;
    }
    if (*rank == best) refs.push_back(KeyRef{Scope{scope.tenant, endpoint, inService}, key});
  }
  std::vector<KeyRef> out;
  for (auto& [name, found] : bestByService) out.insert(out.end(), found.second.begin(), found.second.end());
  return out;
}

}  // namespace

std::vector<KeyRef> findKey(pg::Connection& conn, const std::string& key, const std::optional<Scope>& scope,
                            const std::optional<std::string>& service) {
  if (scope) {
    // The services that hold the key in this scope: every lookup by a prefix of the primary key
    // (or the events' key index).
    auto r = conn.exec(
        "SELECT service FROM idem.keys WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3"
        " UNION SELECT service FROM idem.key_archive WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3"
        " UNION SELECT service FROM idem.events WHERE tenant = $1 AND endpoint = $2 AND idem_key = $3"
        " ORDER BY 1",
        {scope->tenant, scope->endpoint, key});
    std::vector<KeyRef> out;
    for (int i = 0; i < r.rows(); ++i) {
      Scope s{scope->tenant, scope->endpoint, r.str(i, "service")};
      if (!service || *service == s.service) out.push_back(KeyRef{std::move(s), key});
    }
    if (out.empty()) out = findUnderTemplate(conn, key, *scope, service);
    return out;
  }
  auto found = refs(searchKeys(conn, key, SearchOptions{true, false, false, 0}));
  if (found.empty()) {
    // A key held or refused as another key's duplicate stored no generation, only its trace row.
    auto r = conn.exec(kCrossKeyScopesSql, {key});
    for (int i = 0; i < r.rows(); ++i)
      found.push_back(KeyRef{Scope{r.str(i, "tenant"), r.str(i, "endpoint"), r.str(i, "service")}, key});
  }
  if (service) std::erase_if(found, [&](const KeyRef& r) { return r.scope.service != *service; });
  return found;
}

std::vector<KeyRef> findResource(pg::Connection& conn, const std::string& resourceRef) {
  return refs(searchKeys(conn, resourceRef, SearchOptions{false, true, false, 0}));
}

KeyHistory loadHistory(pg::Connection& conn, const KeyRef& ref, LoadOptions options) {
  KeyHistory h;
  h.scope = ref.scope;
  h.key = ref.key;
  const std::vector<pg::Param> params{ref.scope.tenant, ref.scope.endpoint, ref.key, ref.scope.service};

  // One snapshot for the three reads, so a sweeper running meanwhile cannot show a generation
  // twice (live and archived) or not at all. READ ONLY works on a hot standby too.
  // Inside a caller's transaction, its snapshot rules instead.
  auto snapshot = pg::Transaction::joinOrBegin(conn, pg::Transaction::Mode::ReadOnlySnapshot);
  h.observedAt = Instant{conn.exec("SELECT (extract(epoch FROM now()) * 1000000)::bigint AS now_us").integer(0, "now_us")};
  auto g = conn.exec(kGenerationsSql,
                     {params[0], params[1], params[2], options.responses ? "true" : "false", params[3]});
  for (int i = 0; i < g.rows(); ++i) h.generations.push_back(readGeneration(g, i, options.responses));
  auto e = conn.exec(kEventsSql, params);  // every event: the explanation counts them all
  for (int i = 0; i < e.rows(); ++i) h.events.push_back(readEvent(e, i));
  loadCrossKey(conn, h);
  snapshot.commit();
  return h;
}

KeyHistory loadByKey(pg::Connection& conn, const std::string& key, const std::optional<Scope>& scope,
                     const std::optional<std::string>& service) {
  auto found = findKey(conn, key, scope, service);
  const std::string inService = service ? " in service '" + *service + "'" : "";
  if (found.empty()) {
    if (scope)
      throw NotFound("no idempotency key '" + key + "' in scope '" + scope->text() + "'" + inService +
                     " (searched live keys, the archive and the event trace)");
    throw NotFound("no idempotency key '" + key + "'" + inService +
                   " (searched live keys, the archive and the duplicates across keys)");
  }
  if (found.size() > 1) {
    const bool servicesDiffer = std::any_of(found.begin(), found.end(),
                                            [&](const KeyRef& r) { return r.scope.service != found.front().scope.service; });
    throw Ambiguous("key '" + key + "' exists in " + std::to_string(found.size()) + " scopes; choose one with " +
                        (servicesDiffer ? "--service and --scope:" : "--scope:") + listScopes(found, false),
                    found);
  }
  // The stored responses too: each execution's amount is read from its response.
  return loadHistory(conn, found.front(), LoadOptions{true});
}

KeyHistory loadByResource(pg::Connection& conn, const std::string& resourceRef) {
  auto found = findResource(conn, resourceRef);
  if (found.empty())
    throw NotFound("no idempotency key produced resource '" + resourceRef + "' (searched live keys and the archive)");
  if (found.size() > 1)
    throw Ambiguous("resource '" + resourceRef + "' belongs to " + std::to_string(found.size()) +
                        " keys; explain one with --key and --scope:" + listScopes(found, true),
                    found);
  // The stored responses too: each execution's amount is read from its response.
  return loadHistory(conn, found.front(), LoadOptions{true});
}

}  // namespace idem::explain
