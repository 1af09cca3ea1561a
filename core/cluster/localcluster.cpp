#include "core/cluster/localcluster.h"

#include <pwd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace idem::cluster {
namespace {

bool isRoot() { return geteuid() == 0; }

std::string readTail(const std::string& path, std::size_t maxBytes = 4000) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > maxBytes ? s.substr(s.size() - maxBytes) : s;
}

}  // namespace

int runProgram(const std::vector<std::string>& argv, std::string* output, bool asPostgresWhenRoot) {
  std::vector<std::string> full;
  if (asPostgresWhenRoot && isRoot()) full = {"/usr/sbin/runuser", "-u", "postgres", "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  std::vector<char*> cargv;
  for (auto& a : full) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  int pipefd[2];
  if (pipe(pipefd) != 0) throw std::runtime_error("pipe() failed");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork() failed");
  if (pid == 0) {
    dup2(pipefd[1], STDOUT_FILENO);
    dup2(pipefd[1], STDERR_FILENO);
    close(pipefd[0]);
    close(pipefd[1]);
    // The server outlives us: keep it off our stdin.
    if (int devnull = ::open("/dev/null", O_RDONLY); devnull >= 0) dup2(devnull, STDIN_FILENO);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(pipefd[1]);
  std::string out;
  std::array<char, 4096> buf{};
  ssize_t n = 0;
  while ((n = read(pipefd[0], buf.data(), buf.size())) > 0) out.append(buf.data(), static_cast<std::size_t>(n));
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (output) *output = std::move(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

LocalCluster::LocalCluster(std::string dataRoot, int port) : m_root(std::move(dataRoot)), m_port(port) {
  m_root = fs::absolute(m_root).lexically_normal().string();
  while (m_root.size() > 1 && m_root.back() == '/') m_root.pop_back();
  // Unix socket paths are limited to 107 bytes.
  if (socketDir().size() + 20 > 107)
    throw std::runtime_error("cluster folder path too long for a Unix socket: " + m_root);
}

std::string LocalCluster::binDir() {
  if (const char* env = std::getenv("IDEM_PG_BINDIR"); env && *env) return env;
  std::string best;
  int bestVersion = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    int v = std::atoi(entry.path().filename().c_str());
    if (v > bestVersion && fs::exists(entry.path() / "bin" / "initdb")) {
      bestVersion = v;
      best = (entry.path() / "bin").string();
    }
  }
  if (best.empty()) throw std::runtime_error("PostgreSQL server binaries not found in /usr/lib/postgresql (apt install postgresql)");
  return best;
}

void LocalCluster::prepareOwnership() const {
  fs::create_directories(m_root);
  fs::create_directories(socketDir());
  if (!isRoot()) return;
  passwd* pw = getpwnam("postgres");
  if (!pw) throw std::runtime_error("running as root needs the 'postgres' system user (apt install postgresql)");
  for (const auto& path : {m_root, socketDir()})
    if (chown(path.c_str(), pw->pw_uid, pw->pw_gid) != 0) throw std::runtime_error("cannot chown " + path);
  // The postgres user must be able to reach the folder through its parents.
  for (fs::path p = fs::path(m_root).parent_path(); p.has_relative_path(); p = p.parent_path()) {
    struct stat st {};
    if (stat(p.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) chmod(p.c_str(), st.st_mode | S_IXOTH);
  }
}

void LocalCluster::init() {
  if (fs::exists(dataDir() + "/PG_VERSION")) return;
  prepareOwnership();
  std::string out;
  int rc = runProgram({binDir() + "/initdb", "-D", dataDir(), "-U", kSuperuser, "--auth=trust", "-E", "UTF8",
                       "--locale=C.UTF-8", "--no-instructions"},
                      &out);
  if (rc != 0) throw std::runtime_error("initdb failed (" + std::to_string(rc) + "): " + out);
}

bool LocalCluster::running() const {
  std::string out;
  return fs::exists(dataDir()) && runProgram({binDir() + "/pg_ctl", "-D", dataDir(), "status"}, &out) == 0;
}

void LocalCluster::start() {
  init();
  if (running()) return;
  prepareOwnership();
  std::string options = "-c listen_addresses='' -k " + socketDir() + " -p " + std::to_string(m_port) +
                        " -c max_connections=300 -c shared_buffers=128MB";
  std::string out;
  int rc = runProgram({binDir() + "/pg_ctl", "-D", dataDir(), "-l", logFile(), "-o", options, "-w", "-t", "60",
                       "start"},
                      &out);
  if (rc != 0) throw std::runtime_error("PostgreSQL did not start: " + out + "\n" + readTail(logFile()));
}

void LocalCluster::stop() {
  if (!fs::exists(dataDir() + "/postmaster.pid")) return;
  std::string out;
  runProgram({binDir() + "/pg_ctl", "-D", dataDir(), "-m", "fast", "-w", "-t", "60", "stop"}, &out);
}

std::string LocalCluster::conninfo(const std::string& dbname) const {
  return "host=" + socketDir() + " port=" + std::to_string(m_port) + " user=" + kSuperuser + " dbname=" + dbname;
}

}  // namespace idem::cluster
