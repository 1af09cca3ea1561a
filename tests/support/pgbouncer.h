#pragma once
// A real PgBouncer in front of the shared test cluster, for the contract of docs/design.md §8: Idem
// keeps working behind a pooler in transaction mode. Its socket and files live in a folder of
// its own; it is stopped and the folder removed when the object goes.
#include <string>

namespace idem::test {

class PgBouncer {
 public:
  /// Pools `targetConninfo`'s server (host, port and user are read from it) in transaction
  /// mode with `serverConnections` server connections per database, so sessions move between
  /// server connections as soon as there are more clients than that. Throws with the log when
  /// it does not start (e.g. pgbouncer not installed: ./run installs it).
  explicit PgBouncer(const std::string& targetConninfo, int serverConnections = 2);
  PgBouncer(const PgBouncer&) = delete;
  PgBouncer& operator=(const PgBouncer&) = delete;
  ~PgBouncer();

  /// libpq connection string for database `dbname` through the pooler.
  [[nodiscard]] std::string conninfo(const std::string& dbname) const;

 private:
  std::string m_dir;
  std::string m_user;
};

}  // namespace idem::test
