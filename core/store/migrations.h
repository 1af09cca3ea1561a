#pragma once
// Versioned schema migrations embedded from resources/migrations (NNNN_name.sql).
#include <string>
#include <vector>

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
};

/// Applies the missing migrations, each in its own transaction, under an advisory lock so
/// concurrent runs are safe. Running it twice changes nothing.
MigrateReport migrate(pg::Connection& conn);

/// The applied schema version, 0 when Idem's schema is absent.
[[nodiscard]] int appliedSchemaVersion(pg::Connection& conn);

}  // namespace idem::store
