#pragma once
// Versioned schema migrations embedded from resources/migrations (NNNN_name.sql).
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

/// The migrations this build knows, in version order.
[[nodiscard]] std::vector<Migration> knownMigrations();
/// The schema version this build expects (the highest known migration).
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
MigrateReport migrate(pg::Connection& conn, std::chrono::milliseconds lockTimeout = kDefaultLockTimeout);

/// The applied schema version, 0 when Idem's schema is absent.
[[nodiscard]] int appliedSchemaVersion(pg::Connection& conn);

}  // namespace idem::store
