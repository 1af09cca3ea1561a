#include "tests/support/pgbouncer.h"

#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/cluster/localcluster.h"

namespace idem::test {
namespace {

constexpr int kPort = 6432;  // the socket is in our own folder, so the number cannot collide

std::map<std::string, std::string> parseConninfo(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (!options) {
    std::string message = error ? error : "cannot parse the connection string";
    PQfreemem(error);
    throw std::runtime_error(message);
  }
  std::map<std::string, std::string> out;
  for (PQconninfoOption* o = options; o->keyword; ++o)
    if (o->val) out[o->keyword] = o->val;
  PQconninfoFree(options);
  return out;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// pgbouncer refuses to run as root: then the files must belong to the user it runs as.
void handToPostgresWhenRoot(const std::string& path) {
  if (geteuid() != 0) return;
  const passwd* pw = getpwnam("postgres");
  if (!pw || chown(path.c_str(), pw->pw_uid, pw->pw_gid) != 0)
    throw std::runtime_error("cannot hand " + path + " to the postgres user");
}

}  // namespace

PgBouncer::PgBouncer(const std::string& targetConninfo, int serverConnections) {
  const auto target = parseConninfo(targetConninfo);
  m_user = target.count("user") ? target.at("user") : "postgres";
  char tmpl[] = "/tmp/idem-pgbouncer-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  m_dir = tmpl;
  std::filesystem::permissions(m_dir, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                          std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                          std::filesystem::perms::others_exec);
  handToPostgresWhenRoot(m_dir);
  const std::string ini = m_dir + "/pgbouncer.ini";
  {
    std::ofstream out(ini);
    out << "[databases]\n* = host=" << target.at("host") << " port=" << (target.count("port") ? target.at("port") : "5432")
        << "\n[pgbouncer]\nlisten_addr =\nunix_socket_dir = " << m_dir << "\nlisten_port = " << kPort
        << "\nauth_type = trust\nauth_file = " << m_dir << "/users.txt\npool_mode = transaction\n"
        << "default_pool_size = " << serverConnections << "\nmax_client_conn = 500\n"
        << "logfile = " << m_dir << "/pgbouncer.log\npidfile = " << m_dir << "/pgbouncer.pid\n";
  }
  {
    std::ofstream out(m_dir + "/users.txt");
    out << '"' << m_user << "\" \"\"\n";
  }
  handToPostgresWhenRoot(ini);
  handToPostgresWhenRoot(m_dir + "/users.txt");
  std::string output;
  // -d: it forks and writes its pid file; the destructor stops it by that pid.
  if (cluster::runProgram({"/usr/sbin/pgbouncer", "-d", ini}, &output) != 0)
    throw std::runtime_error("pgbouncer did not start (apt install pgbouncer): " + output +
                             readFile(m_dir + "/pgbouncer.log"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (PQping(conninfo("postgres").c_str()) != PQPING_OK) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("pgbouncer does not answer: " + readFile(m_dir + "/pgbouncer.log"));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

PgBouncer::~PgBouncer() {
  const pid_t pid = static_cast<pid_t>(std::atoi(readFile(m_dir + "/pgbouncer.pid").c_str()));
  if (pid > 0 && kill(pid, SIGTERM) == 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (kill(pid, 0) == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::error_code ec;
  std::filesystem::remove_all(m_dir, ec);
}

std::string PgBouncer::conninfo(const std::string& dbname) const {
  return "host=" + m_dir + " port=" + std::to_string(kPort) + " user=" + m_user + " dbname=" + dbname;
}

}  // namespace idem::test
