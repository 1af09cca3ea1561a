#include "core/store/migrations.h"

#include <algorithm>
#include <charconv>

#include "core/store/transaction.h"
#include "resources/embedded_resources.h"

namespace idem::store {
namespace {
// Arbitrary constant shared by every idemctl: serialises concurrent migrate runs.
constexpr long long kMigrationLock = 0x1de30001;

constexpr std::string_view kBookkeeping = R"sql(
CREATE SCHEMA IF NOT EXISTS idem;
CREATE TABLE IF NOT EXISTS idem.schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
)sql";
}  // namespace

std::vector<Migration> knownMigrations(MigrationSet set) {
  const std::string_view folder = set == MigrationSet::Demo ? "migrations/demo/" : "migrations/";
  std::vector<Migration> out;
  for (std::string_view path : resources::list(folder)) {
    std::string_view file = path.substr(folder.size());
    if (file.find('/') != std::string_view::npos) continue;  // another set's folder
    Migration m;
    auto [ptr, ec] = std::from_chars(file.data(), file.data() + file.size(), m.version);
    if (ec != std::errc{} || m.version <= 0) continue;
    m.name = std::string(file);
    m.sql = std::string(*resources::find(path));
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
  return out;
}

int expectedSchemaVersion() {
  auto all = knownMigrations();
  return all.empty() ? 0 : all.back().version;
}

int appliedSchemaVersion(pg::Connection& conn) {
  // Two statements: a relation named in a query must exist when the query is parsed.
  if (conn.exec("SELECT to_regclass('idem.schema_migrations') IS NULL AS missing").boolean(0, "missing")) return 0;
  return static_cast<int>(
      conn.exec("SELECT coalesce(max(version), 0) AS v FROM idem.schema_migrations").integer(0, "v"));
}

namespace {

/// Runs fn in a transaction that holds the migration lock. A transaction-scoped lock, not a
/// session lock: behind a pooler in transaction mode the session's next statement may reach
/// another server connection, where a session lock could be neither seen nor released.
/// lock_timeout covers the migration's own statements too: DDL waiting on a table someone holds
/// open (a console's transaction) fails and names them instead of hanging every later query.
template <typename Fn>
void underMigrationLock(pg::Connection& conn, std::chrono::milliseconds lockTimeout, Fn&& fn) {
  try {
    pg::Transaction tx(conn);
    advisoryXactLock(conn, kMigrationLock, lockTimeout);
    fn();
    tx.commit();
    return;
  } catch (const pg::QueryError& e) {
    if (!isLockTimeout(e)) throw;
  }
  throw lockWaitTimeout(conn, "the migration lock (advisory key 0x1de30001) or a lock on the schema's tables",
                        lockTimeout, kMigrationLock, /*includeRelations=*/true);
}

}  // namespace

MigrateReport migrate(pg::Connection& conn, std::chrono::milliseconds lockTimeout, bool withDemo) {
  MigrateReport report;
  underMigrationLock(conn, lockTimeout, [&] {
    conn.script(kBookkeeping);
    report.from = appliedSchemaVersion(conn);
  });
  report.to = report.from;
  // Apply every known version not yet recorded, not only those above the highest: a
  // migration merged out of order must still reach databases that were migrated meanwhile.
  // Each one is checked again under the lock, since another migrate may have applied it.
  std::vector<Migration> migrations = knownMigrations();
  if (withDemo) {
    auto demo = knownMigrations(MigrationSet::Demo);
    migrations.insert(migrations.end(), demo.begin(), demo.end());
    std::sort(migrations.begin(), migrations.end(), [](const auto& a, const auto& b) { return a.version < b.version; });
  }
  for (const auto& m : migrations) {
    bool applied = false;
    underMigrationLock(conn, lockTimeout, [&] {
      if (conn.exec("SELECT 1 FROM idem.schema_migrations WHERE version = $1", {m.version}).rows() > 0) return;
      try {
        conn.script(m.sql);
      } catch (const pg::QueryError& e) {
        throw pg::QueryError("migration " + m.name + ": " + e.what(), e.sqlstate());
      }
      conn.exec("INSERT INTO idem.schema_migrations (version, name) VALUES ($1, $2)", {m.version, m.name});
      applied = true;
    });
    if (!applied) continue;
    report.applied.push_back(m.name);
    report.to = std::max(report.to, m.version);
  }
  underMigrationLock(conn, lockTimeout, [&] { report.hardening = hardenBuiltins(conn); });
  return report;
}

std::vector<std::string> missingDemoTables(pg::Connection& conn, bool faultAttempts) {
  std::vector<std::string> missing;
  for (const std::string table : {"idem_demo.ledger", "idem_demo.fault_attempts"}) {
    if (table == "idem_demo.fault_attempts" && !faultAttempts) continue;
    if (conn.exec("SELECT to_regclass($1) IS NULL AS missing", {table}).boolean(0, "missing")) missing.push_back(table);
  }
  return missing;
}

}  // namespace idem::store
