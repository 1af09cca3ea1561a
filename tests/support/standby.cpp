#include "tests/support/standby.h"

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace idem::test {

Standby::Standby(PrivateCluster& primary) {
  char tmpl[] = "/tmp/idem-standby-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  m_dir = tmpl;
  // The server runs as postgres when we are root (initdb refuses root): the folder is its.
  if (geteuid() == 0) {
    if (const passwd* pw = getpwnam("postgres"); pw == nullptr || chown(m_dir.c_str(), pw->pw_uid, pw->pw_gid) != 0)
      throw std::runtime_error("cannot give " + m_dir + " to the postgres user");
  }
  std::string out;
  const int rc = cluster::runProgram({cluster::LocalCluster::binDir() + "/pg_basebackup", "-D", m_dir + "/data", "-R",
                                      "-X", "stream", "-c", "fast", "-h", primary.cluster().root() + "/sock", "-p",
                                      "5432", "-U", cluster::LocalCluster::kSuperuser},
                                     &out);
  if (rc != 0) throw std::runtime_error("pg_basebackup failed: " + out);
  m_cluster = std::make_unique<cluster::LocalCluster>(m_dir, 5432);
  m_cluster->start();
}

Standby::~Standby() {
  try {
    m_cluster->stop();
  } catch (...) {
  }
  std::error_code ec;
  std::filesystem::remove_all(m_dir, ec);
}

void Standby::promote() {
  std::string out;
  if (cluster::runProgram({cluster::LocalCluster::binDir() + "/pg_ctl", "-D", m_dir + "/data", "-w", "-t", "60",
                           "promote"},
                          &out) != 0)
    throw std::runtime_error("pg_ctl promote failed: " + out);
}

void waitForStandbys(pg::Connection& primary, int n, const std::string& syncState) {
  for (int i = 0; i < 600; ++i) {
    auto r = primary.exec("SELECT count(*) AS n FROM pg_stat_replication WHERE state = 'streaming' AND ($1 = '' OR sync_state = $1)",
                          {syncState});
    if (r.integer(0, "n") >= n) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("no standby streaming after 60 s");
}

}  // namespace idem::test
