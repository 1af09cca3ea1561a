#pragma once
// Versioned schema migrations embedded from resources/migrations (NNNN_name.sql): the store's
// schema, and apart from it (resources/migrations/demo) the tables only the demo endpoint uses.
// The two sets share one numbering and one idem.schema_migrations, so a store migrated before
// they were split (it has versions 4 and 21 recorded) is already up to date for both.
#include <chrono>
#include <string>
#include <vector>

#include "core/store/hardening.h"
#include "core/store/lockwait.h"
#include "core/store/pg.h"

namespace idem::store {

struct Migration {
  int version = 0;
  std::string name;
  std::string sql;
};

/// The store's schema, or the tables of `idemctl serve`'s demo API (idem_demo.ledger,
/// idem_demo.fault_attempts), which a production store does not have.
enum class MigrationSet { Store, Demo };

/// The migrations of a set this build knows, in version order.
[[nodiscard]] std::vector<Migration> knownMigrations(MigrationSet set = MigrationSet::Store);
/// The schema version this build expects (the highest known migration of the store's set).
[[nodiscard]] int expectedSchemaVersion();

struct MigrateReport {
  int from = 0;
  int to = 0;
  std::vector<std::string> applied;  // names, in order
  /// Built-ins still open to the console after this run (core/store/hardening.h).
  HardeningReport hardening;
};

/// Applies the missing migrations, each in its own transaction, under an advisory lock so
/// concurrent runs are safe, then revokes the built-ins Idem's roles must not use (every run:
/// a superuser's later run closes what the owner's could not). Running it twice changes nothing.
/// Each wait for a lock (the migration lock, a table a session holds) lasts at most
/// `lockTimeout`; past it throws LockWaitTimeout naming the holders.
/// `withDemo`: the demo's tables too (`idemctl migrate --demo`), in version order with the rest.
MigrateReport migrate(pg::Connection& conn, std::chrono::milliseconds lockTimeout = kDefaultLockTimeout,
                      bool withDemo = false);

/// The demo tables `idemctl serve` writes to (the ledger; fault_attempts with fault injection)
/// that this store lacks, e.g. {"idem_demo.ledger"}; empty when it has them.
[[nodiscard]] std::vector<std::string> missingDemoTables(pg::Connection& conn, bool faultAttempts);

/// The applied schema version, 0 when Idem's schema is absent.
[[nodiscard]] int appliedSchemaVersion(pg::Connection& conn);

}  // namespace idem::store
