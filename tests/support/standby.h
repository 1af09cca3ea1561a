#pragma once
// A real streaming-replication hot standby of a private cluster: pg_basebackup -R -X stream
// from the primary's socket, started as a cluster of its own. Removed with its folder.
#include <memory>
#include <string>

#include "tests/support/testdb.h"

namespace idem::test {

class Standby {
 public:
  explicit Standby(PrivateCluster& primary);
  Standby(const Standby&) = delete;
  Standby& operator=(const Standby&) = delete;
  ~Standby();
  [[nodiscard]] std::string conninfo(const std::string& db = "postgres") const { return m_cluster->conninfo(db); }
  [[nodiscard]] cluster::LocalCluster& cluster() { return *m_cluster; }
  /// pg_ctl promote: the standby becomes a primary.
  void promote();

 private:
  std::string m_dir;
  std::unique_ptr<cluster::LocalCluster> m_cluster;
};

/// Waits (up to 60 s) until `primary` lists `n` standbys streaming, with sync_state `syncState`
/// ("" for any); throws when they never come.
void waitForStandbys(pg::Connection& primary, int n, const std::string& syncState = {});

}  // namespace idem::test
