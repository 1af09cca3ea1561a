#pragma once
// A private PostgreSQL cluster in a folder of our own: for the test suites and the demo.
// Not an open door on the machine: the folder and its socket folder are the server user's
// alone (0700), the socket too; no rule trusts anyone. The superuser logs in only through the
// socket, by peer authentication (also for streaming replication: pg_basebackup, a standby),
// as the OS user who runs the cluster (root's server runs as the `postgres` system user, since
// initdb refuses root; then root and postgres are let in);
// every other role needs its password (scram-sha-256), over the socket and over loopback TCP,
// which is off unless asked for. Folders outside the cluster's own are never changed: as root,
// a cluster folder the postgres user cannot reach is refused with the folder named.
#include <optional>
#include <string>
#include <vector>

namespace idem::cluster {

class LocalCluster {
 public:
  /// dataRoot holds the data directory, the socket and the log; created when missing.
  explicit LocalCluster(std::string dataRoot, int port = 5432);

  /// Also listen on 127.0.0.1:port (roles with a password only), with TLS when a certificate
  /// and its key (PEM files) are given. Call before start().
  void listenOnLoopback(std::string certFile = {}, std::string keyFile = {});

  /// Runs initdb when the data directory does not exist yet. Throws on failure with the log.
  void init();
  /// Starts the server and waits until it accepts connections. Rewrites pg_hba.conf and
  /// pg_ident.conf first (a cluster made by an older Idem loses its trust rules).
  void start();
  /// Fast shutdown; waits until the server is gone. No-op when it is not running.
  void stop();
  [[nodiscard]] bool running() const;
  /// The port the server runs on (postmaster.pid) or, stopped, the one it last started with
  /// (postmaster.opts); none for a cluster never started. Lets `idemctl cluster conninfo`
  /// name the right port without being told it again.
  [[nodiscard]] std::optional<int> recordedPort() const;

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
  [[nodiscard]] std::string tlsDir() const { return m_root + "/tls"; }
  void prepareFolders() const;
  void writeAccessRules() const;
  void installTls() const;
  std::string m_root;
  int m_port;
  bool m_tcp = false;
  std::string m_certFile;
  std::string m_keyFile;
};

/// Runs argv (no shell), as the postgres system user when we are root and asUser is set.
/// Returns the exit status; output (stdout+stderr) is stored in *output when given.
int runProgram(const std::vector<std::string>& argv, std::string* output = nullptr, bool asPostgresWhenRoot = true);

}  // namespace idem::cluster
