#pragma once
// A login role in one of Idem's groups (idem_service, idem_admin, idem_console), for the suites
// that run a face of Idem under its least-privilege role (README, "Roles").
#include <unistd.h>

#include <string>

#include "tests/support/testdb.h"

namespace idem::test {

/// A login role that is a member of `group` (roles are cluster-wide: the name is unique).
struct LoginRole {
  LoginRole(const TestDatabase& db, const std::string& group) {
    name = "t_" + group + "_" + std::to_string(getpid()) + "_" + std::to_string(counter()++);
    auto admin = db.connect();
    admin.exec("CREATE ROLE " + name + " LOGIN PASSWORD '" + kPassword + "' IN ROLE " + group);
    conninfo = db.conninfo() + " user=" + name + " password=" + kPassword;
    m_admin = db.conninfo();
  }
  ~LoginRole() {
    try {
      auto admin = pg::Connection(m_admin);
      admin.exec("DROP OWNED BY " + name);
      admin.exec("DROP ROLE " + name);
    } catch (...) {  // the database may already be gone; the cluster is thrown away anyway
    }
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
  static constexpr const char* kPassword = "role-test-pw";
  std::string name;
  std::string conninfo;
  std::string m_admin;
};

/// The SQLSTATE a statement fails with as this role, or "" when it succeeded, in a transaction
/// begun with `begin` and rolled back: a wrongly allowed write changes nothing for the checks
/// that follow.
inline std::string sqlstateOf(const std::string& conninfo, const std::string& sql, const char* begin = "BEGIN") {
  pg::Connection c(conninfo);
  c.exec(begin);
  try {
    c.exec(sql);
  } catch (const pg::QueryError& e) {
    return e.sqlstate();
  }
  c.exec("ROLLBACK");
  return "";
}

}  // namespace idem::test
