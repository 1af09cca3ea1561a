#include "core/store/tenantscope.h"

#include <nlohmann/json.hpp>

#include "core/policy/tenantsource.h"

namespace idem::store {

std::optional<TenantScopeChange> tenantScopeChange(pg::Connection& conn, const policy::Policy& p,
                                                   const std::string& service) {
  const std::string to = p.tenantSource();
  // Few rows: identical documents share a version (recordPolicy).
  auto recorded = conn.exec("SELECT version, document::text AS document FROM idem.policies ORDER BY version");
  std::vector<std::string> other;
  std::string from;
  for (int i = 0; i < recorded.rows(); ++i) {
    const auto doc = nlohmann::json::parse(recorded.str(i, "document"), nullptr, false);
    const std::string source = policy::tenantSourceOf(doc);
    if (source == to) continue;
    other.push_back(recorded.str(i, "version"));
    from = source;
  }
  if (other.empty()) return std::nullopt;
  auto live = conn.exec(
      "SELECT count(*) AS n, coalesce(to_char(max(expires_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC', "
      "'') "
      "AS last FROM idem.keys WHERE policy_version = ANY($1::integer[]) AND expires_at > now() AND service = $2",
      {pg::arrayLiteral(other), service});
  if (live.integer(0, "n") == 0) return std::nullopt;
  // Name the source of the newest such key's policy when several differ.
  auto newest = conn.exec(
      "SELECT p.document::text AS document FROM idem.keys k JOIN idem.policies p ON p.version = k.policy_version "
      "WHERE k.policy_version = ANY($1::integer[]) AND k.expires_at > now() AND k.service = $2 "
      "ORDER BY k.created_at DESC LIMIT 1",
      {pg::arrayLiteral(other), service});
  if (newest.rows() == 1)
    from = policy::tenantSourceOf(nlohmann::json::parse(newest.str(0, "document"), nullptr, false));
  return TenantScopeChange{from, to, live.integer(0, "n"), live.str(0, "last")};
}

std::string describe(const TenantScopeChange& change) {
  const auto words = [](const std::string& source) {
    return source.empty() ? std::string("no declared tenant source (one shared tenant)") : source;
  };
  return std::to_string(change.liveKeys) + " live key" + (change.liveKeys == 1 ? " was" : "s were") +
         " written with tenants from " + words(change.from) + "; this start takes them from " + words(change.to) +
         ". Each of those keys would get another tenant, so a retry would execute again instead of replaying. "
         "To proceed deliberately: start with the old tenant source until the last of them expires (" +
         change.lastExpiry + "), or pass --accept-tenant-change to accept that they may execute twice.";
}

}  // namespace idem::store
