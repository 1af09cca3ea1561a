// idemctl migrate: applies the embedded schema migrations; safe to run twice.
#include <iostream>

#include "app/idemctl/command.h"
#include "core/store/migrations.h"

namespace {
int runMigrate(const idemctl::Args& args) {
  try {
    idem::pg::Connection conn(idemctl::conninfo(args));
    auto report = idem::store::migrate(conn);
    if (report.applied.empty()) {
      std::cout << "schema is up to date (version " << report.to << ")\n";
    } else {
      for (const auto& name : report.applied) std::cout << "applied " << name << '\n';
      std::cout << "schema version " << report.from << " -> " << report.to << '\n';
    }
    return idemctl::kOk;
  } catch (const idem::pg::Unavailable& e) {
    std::cerr << "idemctl migrate: " << e.what() << "\nCheck --db or the PG* variables.\n";
    return idemctl::kUnavailable;
  }
}
}  // namespace

IDEMCTL_COMMAND("migrate", "create or upgrade Idem's schema (safe to run twice)", "[--db CONNINFO]", {"db"},
                runMigrate);
