#pragma once
// Test fixtures over real PostgreSQL. No fakes: every store test talks to a real server.
#include <memory>
#include <string>

#include "core/cluster/localcluster.h"
#include "core/store/pg.h"

namespace idem::test {

/// Connection string of the shared throwaway cluster started by CTest ($IDEM_TEST_CONNINFO).
std::string sharedClusterConninfo();

/// What a fresh test database is given: nothing, the store's schema (`idemctl migrate`), or that
/// and the demo's tables `idemctl serve` writes to (`idemctl migrate --demo`).
enum class Schema { None, Store, StoreAndDemo };

/// A fresh database in the shared cluster, migrated, dropped when destroyed.
class TestDatabase {
 public:
  explicit TestDatabase(const std::string& prefix, Schema schema = Schema::StoreAndDemo);
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;
  ~TestDatabase();
  [[nodiscard]] const std::string& conninfo() const { return m_conninfo; }
  [[nodiscard]] const std::string& name() const { return m_name; }
  /// A new connection to this database.
  [[nodiscard]] pg::Connection connect() const { return pg::Connection(m_conninfo); }

 private:
  std::string m_admin;
  std::string m_name;
  std::string m_conninfo;
};

/// A private cluster that a test may stop and start (shutting down the shared one would
/// disturb suites running in parallel). Removed with its folder when destroyed.
class PrivateCluster {
 public:
  PrivateCluster();
  PrivateCluster(const PrivateCluster&) = delete;
  PrivateCluster& operator=(const PrivateCluster&) = delete;
  ~PrivateCluster();
  [[nodiscard]] cluster::LocalCluster& cluster() { return *m_cluster; }
  [[nodiscard]] std::string conninfo(const std::string& db = "postgres") const { return m_cluster->conninfo(db); }

 private:
  std::string m_dir;
  std::unique_ptr<cluster::LocalCluster> m_cluster;
};

/// A loopback TCP port nothing listens on right now (for a cluster asked to listen on TCP).
int freeLoopbackPort();

/// Path of a file under tests/data.
std::string dataPath(const std::string& relative);

/// Runs the built idemctl with arguments; returns its exit status and output.
int runIdemctl(const std::vector<std::string>& args, std::string* output);

}  // namespace idem::test
