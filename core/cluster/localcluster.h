#pragma once
// A private PostgreSQL cluster in a folder of our own: for the test suites and the demo.
// The server listens on a Unix socket inside the folder only (no TCP), with trust
// authentication, so only users who can enter the folder can connect. When run as root the
// server runs as the `postgres` system user, since initdb refuses root.
#include <string>
#include <vector>

namespace idem::cluster {

class LocalCluster {
 public:
  /// dataRoot holds the data directory, the socket and the log; created when missing.
  explicit LocalCluster(std::string dataRoot, int port = 5432);

  /// Runs initdb when the data directory does not exist yet. Throws on failure with the log.
  void init();
  /// Starts the server and waits until it accepts connections.
  void start();
  /// Fast shutdown; waits until the server is gone. No-op when it is not running.
  void stop();
  [[nodiscard]] bool running() const;

  /// libpq connection string for database `dbname` as the cluster's superuser.
  [[nodiscard]] std::string conninfo(const std::string& dbname = "postgres") const;
  [[nodiscard]] const std::string& root() const { return m_root; }
  [[nodiscard]] std::string logFile() const { return m_root + "/server.log"; }

  /// The folder with initdb/pg_ctl: $IDEM_PG_BINDIR, else the newest /usr/lib/postgresql/N/bin.
  [[nodiscard]] static std::string binDir();
  static constexpr const char* kSuperuser = "idem";

 private:
  [[nodiscard]] std::string dataDir() const { return m_root + "/data"; }
  [[nodiscard]] std::string socketDir() const { return m_root + "/sock"; }
  void prepareOwnership() const;
  std::string m_root;
  int m_port;
};

/// Runs argv (no shell), as the postgres system user when we are root and asUser is set.
/// Returns the exit status; output (stdout+stderr) is stored in *output when given.
int runProgram(const std::vector<std::string>& argv, std::string* output = nullptr, bool asPostgresWhenRoot = true);

}  // namespace idem::cluster
