#include "tests/support/testdb.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>

namespace idem::test {

std::string sharedClusterConninfo() {
  const char* env = std::getenv("IDEM_TEST_CONNINFO");
  if (!env || !*env)
    throw std::runtime_error("IDEM_TEST_CONNINFO is not set: run the suites through ctest (./run test)");
  return env;
}

namespace {
std::string uniqueSuffix() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  return std::to_string(getpid()) + "_" + std::to_string(counter++) + "_" + std::to_string(rd() % 100000);
}
}  // namespace

TestDatabase::TestDatabase(const std::string& prefix, Schema schema) : m_admin(sharedClusterConninfo()) {
  m_name = "t_" + prefix + "_" + uniqueSuffix();
  pg::Connection admin(m_admin);
  admin.exec("CREATE DATABASE " + pg::quoteIdentifier(m_name));
  m_conninfo = m_admin + " dbname=" + m_name;  // a later keyword overrides the earlier one
  if (schema != Schema::None) {
    std::vector<std::string> args{"migrate", "--db", m_conninfo};
    if (schema == Schema::StoreAndDemo) args.emplace_back("--demo");
    std::string out;
    if (runIdemctl(args, &out) != 0) throw std::runtime_error("migrate failed: " + out);
  }
}

TestDatabase::~TestDatabase() {
  try {
    pg::Connection admin(m_admin);
    admin.exec("DROP DATABASE IF EXISTS " + pg::quoteIdentifier(m_name) + " WITH (FORCE)");
  } catch (...) {  // the cluster is thrown away at the end of the run anyway
  }
}

PrivateCluster::PrivateCluster() {
  char tmpl[] = "/tmp/idem-private-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  m_dir = tmpl;
  m_cluster = std::make_unique<cluster::LocalCluster>(m_dir, 5432);
  m_cluster->start();
}

PrivateCluster::~PrivateCluster() {
  try {
    m_cluster->stop();
  } catch (...) {
  }
  std::error_code ec;
  std::filesystem::remove_all(m_dir, ec);
}

int freeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  close(fd);
  if (!ok) throw std::runtime_error("no free loopback port");
  return ntohs(a.sin_port);
}

std::string dataPath(const std::string& relative) { return std::string(IDEM_TEST_DATA_DIR) + "/" + relative; }

int runIdemctl(const std::vector<std::string>& args, std::string* output) {
  const char* exe = std::getenv("IDEMCTL");
  if (!exe || !*exe) throw std::runtime_error("IDEMCTL is not set: run the suites through ctest");
  std::vector<std::string> argv{exe};
  argv.insert(argv.end(), args.begin(), args.end());
  return cluster::runProgram(argv, output, false);
}

}  // namespace idem::test
