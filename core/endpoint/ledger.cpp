#include "core/endpoint/ledger.h"

#include "core/text/json_text.h"

namespace idem::endpoint {
namespace {

constexpr const char* kInsertSql =
    "INSERT INTO idem_demo.ledger (id, kind, tenant, endpoint, idem_key, generation, status, amount, currency, "
    "customer, request_id, payload) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb)";

constexpr const char* kColumns =
    "SELECT payload::text AS payload, status, idem_key, generation, "
    "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS recorded_at "
    "FROM idem_demo.ledger ";

constexpr const char* kListByKeySql =
    "WHERE kind = $1 AND tenant = $2 AND idem_key = $3 ORDER BY created_at DESC, id LIMIT $4";
constexpr const char* kListSql = "WHERE kind = $1 AND tenant = $2 ORDER BY created_at DESC, id LIMIT $3";
constexpr const char* kFindSql = "WHERE kind = $1 AND tenant = $2 AND id = $3";

template <typename T>
pg::Param opt(const std::optional<T>& v) {
  return v ? pg::Param(*v) : pg::Param::null();
}

nlohmann::json rowJson(const pg::Result& r, int i) {
  auto row = nlohmann::json::parse(r.text(i, r.column("payload")), nullptr, false);
  if (!row.is_object()) row = nlohmann::json::object();
  row["ledger_status"] = r.str(i, "status");
  row["idempotency_key"] = r.isNull(i, r.column("idem_key")) ? nlohmann::json() : nlohmann::json(r.str(i, "idem_key"));
  row["generation"] =
      r.isNull(i, r.column("generation")) ? nlohmann::json() : nlohmann::json(r.integer(i, "generation"));
  row["recorded_at"] = r.str(i, "recorded_at");
  return row;
}

}  // namespace

store::SideStatement insertStatement(const LedgerRow& row) {
  return {kInsertSql,
          {row.id, row.kind, row.tenant, row.endpoint, opt(row.key),
           row.generation > 0 ? pg::Param(row.generation) : pg::Param::null(), row.status, opt(row.amount),
           opt(row.currency), opt(row.customer), row.requestId, text::dumpJson(row.payload)}};
}

nlohmann::json listLedger(pg::Connection& conn, const std::string& kind, const std::string& tenant,
                          const std::optional<std::string>& key, int limit) {
  const std::string base = kColumns;
  auto r = key ? conn.execPrepared("ledger_list_key", base + kListByKeySql, {kind, tenant, *key, limit})
               : conn.execPrepared("ledger_list", base + kListSql, {kind, tenant, limit});
  nlohmann::json data = nlohmann::json::array();
  for (int i = 0; i < r.rows(); ++i) data.push_back(rowJson(r, i));
  return data;
}

std::optional<nlohmann::json> findLedger(pg::Connection& conn, const std::string& kind, const std::string& tenant,
                                         const std::string& id) {
  auto r = conn.execPrepared("ledger_find", std::string(kColumns) + kFindSql, {kind, tenant, id});
  if (r.rows() == 0) return std::nullopt;
  return rowJson(r, 0);
}

}  // namespace idem::endpoint
