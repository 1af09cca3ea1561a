#pragma once
// For the targets that need PostgreSQL: a fresh database in the cluster $IDEM_FUZZ_CONNINFO
// names (tests/fuzz/fuzz.sh starts a throwaway one), migrated to this build's schema.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/store/migrations.h"
#include "core/store/pg.h"

namespace idem::fuzz {

/// The new database's conninfo; exits with a message when no cluster is named. `withDemo`: the
/// demo API's tables too (`idemctl migrate --demo`), for a target that runs serve's API.
inline std::string freshDatabase(const std::string& target, bool withDemo = false) {
  const char* admin = std::getenv("IDEM_FUZZ_CONNINFO");
  if (!admin || !*admin) {
    std::fprintf(stderr, "%s: set IDEM_FUZZ_CONNINFO to a PostgreSQL cluster (./run fuzz does)\n", target.c_str());
    std::exit(2);
  }
  const std::string db = target + "_" + std::to_string(getpid());
  pg::Connection(admin).exec("CREATE DATABASE " + pg::quoteIdentifier(db));
  const std::string conninfo = std::string(admin) + " dbname=" + db;
  pg::Connection conn(conninfo);
  store::migrate(conn, store::kDefaultLockTimeout, withDemo);
  return conninfo;
}

}  // namespace idem::fuzz
