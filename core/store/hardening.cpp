#include "core/store/hardening.h"

namespace idem::store {
namespace {

// Built-ins that lock or write (pg_proc, volatile, EXECUTE to PUBLIC by default), beyond the
// advisory-lock family matched by prefix: WAL at will, an xid and a commit record per call,
// the notification queue, large-object writes (all allowed in READ ONLY).
constexpr const char* kWriters =
    "{pg_logical_emit_message,pg_current_xact_id,txid_current,pg_notify,"
    "lo_creat,lo_create,lo_from_bytea,lowrite,lo_put,lo_truncate,lo_truncate64}";

// The one Idem's own roles call: enforcers record and the admin chooses policies under it,
// migrate runs under it (core/store/policystore.cpp, migrations.cpp).
constexpr const char* kGrantedBack = "pg_catalog.pg_advisory_xact_lock(bigint)";

std::vector<std::string> builtins(pg::Connection& conn) {
  auto r = conn.exec(
      "SELECT p.oid::regprocedure::text AS fn FROM pg_proc p "
      "WHERE p.pronamespace = 'pg_catalog'::regnamespace "
      "AND (p.proname LIKE 'pg\\_advisory\\_%' OR p.proname LIKE 'pg\\_try\\_advisory\\_%' "
      "OR p.proname = ANY($1::text[])) ORDER BY 1",
      {kWriters});
  std::vector<std::string> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(r.str(i, "fn"));
  return out;
}

}  // namespace

HardeningReport hardenBuiltins(pg::Connection& conn) {
  HardeningReport report;
  report.rolesPresent =
      conn.exec("SELECT count(*) AS n FROM pg_roles WHERE rolname IN ('idem_service', 'idem_console', 'idem_admin')")
          .integer(0, "n") == 3;
  if (!report.rolesPresent) return report;
  auto who = conn.exec(
      "SELECT r.rolsuper AS su, pg_has_role(d.datdba, 'MEMBER') AS db_owner, current_database() AS db, "
      "coalesce((SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'idem'), '') AS schema_owner, "
      "to_regnamespace('public') IS NOT NULL AS has_public, "
      "coalesce((SELECT pg_has_role(nspowner, 'MEMBER') FROM pg_namespace WHERE nspname = 'public'), false) "
      "  AS public_owner "
      "FROM pg_roles r, pg_database d WHERE r.rolname = current_user AND d.datname = current_database()");
  const bool su = who.boolean(0, "su");
  const std::string db = pg::quoteIdentifier(who.str(0, "db"));
  const std::string owner = who.str(0, "schema_owner");  // regrole text: quoted already when it must be
  const auto fns = builtins(conn);
  const std::string grantBack = std::string("GRANT EXECUTE ON FUNCTION ") + kGrantedBack +
                                " TO idem_service, idem_admin" + (owner.empty() ? "" : ", " + owner) + ";";
  if (su) {
    // regprocedure text is PostgreSQL's own quoting of the signature: safe to splice.
    for (const auto& fn : fns) conn.exec("REVOKE EXECUTE ON FUNCTION " + fn + " FROM PUBLIC");
    conn.exec(grantBack);
  }
  if (su || who.boolean(0, "db_owner")) conn.exec("REVOKE TEMPORARY ON DATABASE " + db + " FROM PUBLIC");
  if (who.boolean(0, "has_public") && (su || who.boolean(0, "public_owner")))
    conn.exec("REVOKE CREATE ON SCHEMA public FROM PUBLIC");

  // What the console may still do, through PUBLIC or otherwise.
  for (const auto& fn : fns)
    if (conn.exec("SELECT has_function_privilege('idem_console', $1::regprocedure, 'EXECUTE') AS ok", {fn})
            .boolean(0, "ok")) {
      report.gaps.push_back(fn);
      report.sql += "REVOKE EXECUTE ON FUNCTION " + fn + " FROM PUBLIC;\n";
    }
  if (!report.gaps.empty()) report.sql += grantBack + "\n";
  if (conn.exec("SELECT has_database_privilege('idem_console', current_database(), 'TEMPORARY') AS ok")
          .boolean(0, "ok")) {
    report.gaps.push_back("TEMPORARY on database " + db);
    report.sql += "REVOKE TEMPORARY ON DATABASE " + db + " FROM PUBLIC;\n";
  }
  if (who.boolean(0, "has_public") &&
      conn.exec("SELECT has_schema_privilege('idem_console', 'public', 'CREATE') AS ok").boolean(0, "ok")) {
    report.gaps.push_back("CREATE on schema public");
    report.sql += "REVOKE CREATE ON SCHEMA public FROM PUBLIC;\n";
  }
  return report;
}

}  // namespace idem::store
