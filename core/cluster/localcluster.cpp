#include "core/cluster/localcluster.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/cluster/serveruser.h"

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

void LocalCluster::listenOnLoopback(std::string certFile, std::string keyFile) {
  m_tcp = true;
  m_certFile = std::move(certFile);
  m_keyFile = std::move(keyFile);
}

void LocalCluster::prepareFolders() const {
  const ServerUser user = serverUser();
  // The folders above are not ours to change (this once added o+x to every one of them): a
  // server user that cannot reach the cluster's folder is told, with the folder named.
  // The cluster's folder itself is made the server user's below: only the way to it counts.
  if (const std::string blocked = firstUnreachable(fs::path(m_root).parent_path().string(), user); !blocked.empty())
    throw std::runtime_error("the " + user.name + " user, which runs the PostgreSQL server" +
                             (isRoot() ? " when idemctl runs as root" : "") + ", cannot enter " + blocked +
                             " on the way to the cluster folder " + m_root +
                             ". Choose a cluster folder it can reach (for example under /tmp or /var/lib), or give it "
                             "access to " + blocked + " yourself; Idem changes no permissions outside the cluster's "
                             "own folder.");
  makePrivateFolder(m_root, user);
  makePrivateFolder(socketDir(), user);
}

void LocalCluster::writeAccessRules() const {
  const ServerUser user = serverUser();
  const std::string su = kSuperuser;
  writePrivateFile(dataDir() + "/pg_hba.conf",
                   "# Written by Idem (core/cluster/localcluster.cpp) at every start. No rule trusts anyone.\n"
                   "# The superuser: through the socket only, as the OS users pg_ident.conf names (peer).\n"
                   "local all " + su + " peer map=idem\n"
                   "# Streaming replication (pg_basebackup -R, a hot standby): the same superuser, same way.\n"
                   "local replication " + su + " peer map=idem\n"
                   "# Every other role: its password, through the socket or loopback TCP (when listening).\n"
                   "local all all scram-sha-256\n"
                   "host all all 127.0.0.1/32 scram-sha-256\n"
                   "host all all ::1/128 scram-sha-256\n",
                   user);
  // Whoever runs the cluster connects as its superuser; as root the server and the tools it
  // starts (pgbouncer in the tests) run as postgres.
  std::string ident = "# Written by Idem at every start: OS users who may log in as " + su + ".\n";
  ident += "idem " + user.clientName + " " + su + "\n";
  if (user.name != user.clientName) ident += "idem " + user.name + " " + su + "\n";
  writePrivateFile(dataDir() + "/pg_ident.conf", ident, user);
}

void LocalCluster::installTls() const {
  if (m_certFile.empty()) return;
  const ServerUser user = serverUser();
  makePrivateFolder(tlsDir(), user);
  // Copies the server may read (its key must be its own, 0600) whoever owns the originals.
  for (const auto& [from, to] : {std::pair{m_certFile, tlsDir() + "/server.crt"}, std::pair{m_keyFile, tlsDir() + "/server.key"}}) {
    std::ifstream in(from);
    if (!in) throw std::runtime_error("cannot read " + from);
    std::stringstream text;
    text << in.rdbuf();
    writePrivateFile(to, text.str(), user);
  }
}

void LocalCluster::init() {
  if (fs::exists(dataDir() + "/PG_VERSION")) return;
  prepareFolders();
  std::string out;
  // Not trust even for the moment until start() writes the access rules.
  int rc = runProgram({binDir() + "/initdb", "-D", dataDir(), "-U", kSuperuser, "--auth-local=peer",
                       "--auth-host=scram-sha-256", "-E", "UTF8",
                       "--locale=C.UTF-8", "--no-instructions"},
                      &out);
  if (rc != 0) throw std::runtime_error("initdb failed (" + std::to_string(rc) + "): " + out);
}

bool LocalCluster::running() const {
  std::string out;
  return fs::exists(dataDir()) && runProgram({binDir() + "/pg_ctl", "-D", dataDir(), "status"}, &out) == 0;
}

namespace {
bool allDigits(const std::string& text) {
  return !text.empty() && text.size() < 6 &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}
}  // namespace

std::optional<int> LocalCluster::recordedPort() const {
  // postmaster.pid: line 4 is the port (PostgreSQL's documented layout of that file).
  if (std::ifstream pid(dataDir() + "/postmaster.pid"); pid) {
    std::string line;
    for (int n = 1; n <= 4 && std::getline(pid, line); ++n)
      if (n == 4 && allDigits(line)) return std::stoi(line);
  }
  // postmaster.opts: the last start's command line, each argument quoted ("-p" "5433").
  if (std::ifstream opts(dataDir() + "/postmaster.opts"); opts) {
    std::stringstream text;
    text << opts.rdbuf();
    const std::string line = text.str();
    const std::string flag = "\"-p\" \"";
    if (const auto at = line.rfind(flag); at != std::string::npos) {
      const std::string digits = line.substr(at + flag.size(), line.find('"', at + flag.size()) - at - flag.size());
      if (allDigits(digits)) return std::stoi(digits);
    }
  }
  return std::nullopt;
}

void LocalCluster::start() {
  init();
  if (running()) return;
  prepareFolders();
  writeAccessRules();
  installTls();
  std::string options = std::string("-c listen_addresses='") + (m_tcp ? "127.0.0.1" : "") + "' -k " + socketDir() +
                        " -c unix_socket_permissions=0700 -p " + std::to_string(m_port) +
                        " -c max_connections=300 -c shared_buffers=128MB";
  if (m_tcp && !m_certFile.empty())
    options += " -c ssl=on -c ssl_cert_file='" + tlsDir() + "/server.crt' -c ssl_key_file='" + tlsDir() + "/server.key'";
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
