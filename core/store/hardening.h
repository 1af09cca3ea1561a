#pragma once
// Least privilege for built-ins (docs/store.md, "Roles"): PostgreSQL lets every role run some
// built-in functions that take locks or write, in a READ ONLY transaction too, and create
// temporary tables. For the console (read only) and the service they are a way to stop what
// they must not (holding the enforcers' advisory lock: nothing starts) or to flood the server
// (pg_logical_emit_message: ~100 MB of WAL a call). `idemctl migrate` revokes them from PUBLIC
// in its database and grants back only what Idem's roles use.
#include <string>
#include <vector>

#include "core/store/pg.h"

namespace idem::store {

struct HardeningReport {
  bool rolesPresent = false;
  /// What a member of idem_console may still do that it should not ("pg_notify(text,text)",
  /// "TEMPORARY on database idem"): empty once hardened.
  std::vector<std::string> gaps;
  /// The statements that close the gaps, for a superuser (revoking a built-in's privilege
  /// takes one; TEMPORARY takes the database's owner).
  std::string sql;
};

/// Revokes what this connection's role may revoke (idempotent) and reports what is left.
HardeningReport hardenBuiltins(pg::Connection& conn);

}  // namespace idem::store
