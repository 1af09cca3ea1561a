#include "app/idemctl/demo_proxy.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <thread>

#include "core/proxy/forwarder.h"
#include "resources/embedded_resources.h"

extern char** environ;

namespace idemctl {

pid_t spawnProcess(std::vector<std::string> args, const std::string& logPath) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The child must not inherit the demo's blocked SIGINT/SIGTERM.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  if (!logPath.empty()) {
    posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, logPath.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  }
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0].c_str(), &files, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

namespace {

/// The URL the sample service printed once it accepts connections; empty if it exited or took
/// longer than 15 s.
std::string awaitListening(pid_t pid, const std::string& logPath, std::size_t from) {
  const std::regex listening("charge_app listening on (http://127\\.0\\.0\\.1:[0-9]+)");
  for (int i = 0; i < 150; ++i) {
    std::ifstream in(logPath);
    std::string text{std::istreambuf_iterator<char>(in), {}};
    std::smatch m;
    const std::string fresh = text.size() > from ? text.substr(from) : std::string();
    if (std::regex_search(fresh, m, listening)) return m[1];
    if (waitpid(pid, nullptr, WNOHANG) == pid) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return {};
}

}  // namespace

DemoProxy::DemoProxy(const std::string& conninfo, const std::string& dataDir, idem::policy::Policy policy) {
  const std::string script = dataDir + "/charge_app.py";
  std::ofstream(script) << *idem::resources::find("sample/charge_app.py");
  const std::string log = dataDir + "/sample-service.log";
  std::size_t logSize = 0;
  if (std::ifstream in{log, std::ios::ate}) logSize = static_cast<std::size_t>(in.tellg());
  m_service = spawnProcess({"python3", script, "--port", "0", "--ledger", dataDir + "/sample-charges.txt"}, log);
  if (m_service <= 0) throw std::runtime_error("could not start python3 (install python3 and python3-flask)");
  m_serviceUrl = awaitListening(m_service, log, logSize);
  if (m_serviceUrl.empty()) {
    kill(m_service, SIGKILL);
    waitpid(m_service, nullptr, 0);
    m_service = -1;
    throw std::runtime_error("the sample service did not start (needs python3-flask); see " + log);
  }

  idem::proxy::ProxyOptions proxy;
  std::string error;
  proxy.upstream = *idem::proxy::parseUpstreamUrl(m_serviceUrl, error);
  idem::endpoint::ServerOptions options;
  options.conninfo = conninfo;
  options.policy = std::move(policy);
  options.threads = 16;
  options.poolSize = 4;
  options.adminPort = 0;
  options.execution = [proxy](idem::gate::Host&) -> std::unique_ptr<idem::gate::Execution> {
    return std::make_unique<idem::proxy::Forwarder>(proxy);
  };
  m_proxy = std::make_unique<idem::endpoint::Server>(std::move(options));
  m_proxy->start();
  m_traffic = std::make_unique<idem::demo::LiveTraffic>("127.0.0.1", m_proxy->port(), "proxy-");
}

DemoProxy::~DemoProxy() {
  m_traffic.reset();
  if (m_proxy) {
    m_proxy->stop();
    m_proxy->wait();
  }
  m_proxy.reset();
  if (m_service > 0) {
    kill(m_service, SIGTERM);
    waitpid(m_service, nullptr, 0);
  }
}

}  // namespace idemctl
