#include "core/store/serviceregistry.h"

namespace idem::store {

void registerService(pg::Connection& conn, const std::string& service, int version) {
  try {
    conn.exec(
        "INSERT INTO idem.services AS s (service, policy_version) VALUES ($1, $2) "
        "ON CONFLICT (service) DO UPDATE SET policy_version = excluded.policy_version, started_at = now()",
        {service, version > 0 ? pg::Param(version) : pg::Param::null()});
  } catch (const pg::QueryError&) {
    // Not this role's to write (42501), a store in recovery or read-only (25006): the list misses
    // one start, and the start goes on; the keys never depend on this row.
  }
}

std::vector<ServiceRecord> knownServices(pg::Connection& conn) {
  auto r = conn.exec(
      "WITH names AS (SELECT service FROM idem.services UNION SELECT DISTINCT service FROM idem.policy_choices) "
      "SELECT n.service, coalesce(s.policy_version, 0) AS last_version, "
      "coalesce((extract(epoch FROM s.started_at) * 1000)::bigint, 0) AS started_ms, "
      "coalesce((SELECT c.version FROM idem.policy_choices c WHERE c.service = n.service ORDER BY c.id DESC LIMIT 1), "
      "0) AS chosen "
      "FROM names n LEFT JOIN idem.services s ON s.service = n.service ORDER BY n.service");
  std::vector<ServiceRecord> out;
  for (int i = 0; i < r.rows(); ++i)
    out.push_back({r.str(i, "service"), static_cast<int>(r.integer(i, "last_version")), r.integer(i, "started_ms"),
                   static_cast<int>(r.integer(i, "chosen"))});
  return out;
}

}  // namespace idem::store
