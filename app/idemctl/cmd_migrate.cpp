// idemctl migrate: applies the embedded schema migrations and revokes the built-ins Idem's roles
// must not use; safe to run twice. The demo's tables only with --demo: a production store
// has none.
#include <iostream>

#include "app/idemctl/command.h"
#include "app/idemctl/start_flags.h"
#include "core/store/migrations.h"

namespace {

constexpr const char* kUsageText = "[--db CONNINFO] [--demo] [--lock-timeout 10s]";

void reportHardening(const idem::store::HardeningReport& h) {
  if (!h.rolesPresent || h.gaps.empty()) return;
  std::cerr << "idemctl migrate: warning: the console and service roles may still run built-ins that lock or write"
               " (they could hold the enforcers' lock so nothing starts, or flood the WAL):\n";
  for (const auto& gap : h.gaps) std::cerr << "  " << gap << '\n';
  std::cerr << "Revoking a built-in's privilege takes a superuser (TEMPORARY: the database's owner). Run "
               "`idemctl migrate` once as a superuser, or have one run (docs/store.md, \"Roles\"):\n"
            << h.sql;
}

int runMigrate(const idemctl::Args& args) {
  std::chrono::milliseconds lockTimeout = idem::store::kDefaultLockTimeout;
  if (auto bad = idemctl::readLockTimeout(args, lockTimeout); !bad.empty())
    return idemctl::usageError("migrate", kUsageText, bad);
  try {
    idem::pg::Connection conn(idemctl::conninfo(args));
    auto report = idem::store::migrate(conn, lockTimeout, /*withDemo=*/args.has("demo"));
    if (report.applied.empty()) {
      std::cout << "schema is up to date (version " << report.to << ")\n";
    } else {
      for (const auto& name : report.applied) std::cout << "applied " << name << '\n';
      // The demo's migrations are numbered below the newest: added later, the version stays.
      if (report.from == report.to) std::cout << "schema version " << report.to << '\n';
      else std::cout << "schema version " << report.from << " -> " << report.to << '\n';
    }
    reportHardening(report.hardening);
    return idemctl::kOk;
  } catch (const idem::pg::Unavailable& e) {
    std::cerr << "idemctl migrate: " << e.what() << "\nCheck --db or the PG* variables.\n";
    return idemctl::kUnavailable;
  } catch (const idem::store::LockWaitTimeout& e) {
    std::cerr << "idemctl migrate: " << e.what() << '\n';
    return idemctl::kFailure;
  }
}
}  // namespace

IDEMCTL_COMMAND("migrate", "create or upgrade Idem's schema (safe to run twice)", kUsageText,
                {idemctl::dbFlag(),
                 idemctl::Flag::toggle("demo",
                                       "Also create the demo's tables (idem_demo.ledger, idem_demo.fault_attempts), "
                                       "which `idemctl serve` writes to; a store behind `idemctl proxy` needs none."),
                 idemctl::lockTimeoutFlag()},
                runMigrate);
