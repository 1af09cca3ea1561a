#pragma once
// An `idemctl proxy` in front of tests/proxy/raw_upstream.py (Python's http.server): for the
// suites that need an upstream that ignores a GET's body, cuts a close-delimited answer short,
// refuses before any work, or is slow for hundreds of requests at once.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/endpoint/serve_process.h"
#include "tests/support/testdb.h"

namespace idem::test {

/// A proxy's flags with a tenant source: the suites are one client unless they name one (a proxy
/// with none refuses to start).
inline std::vector<std::string> withTenantSource(std::vector<std::string> args) {
  const bool named = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a == "--tenant-header" || a == "--tenant-from-authorization" || a == "--single-tenant";
  });
  if (!named) args.push_back("--single-tenant");
  return args;
}

struct RawUpstreamRig {
  /// launcher: argv put before idemctl (e.g. prlimit --nofile=...); extra: more proxy flags.
  RawUpstreamRig(const std::string& prefix, const std::string& policy, const std::vector<std::string>& extra = {},
                 const std::vector<std::string>& launcher = {})
      : db(prefix), dir(std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(getpid()))) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "policy.json") << policy;
    upstream = std::make_unique<ServeProcess>(
        ServeProcess::Program{{"/usr/bin/python3", IDEM_SOURCE_DIR "/tests/proxy/raw_upstream.py", "--ledger",
                               (dir / "ledger.txt").string()}},
        (dir / "upstream.err").string());
    std::vector<std::string> args{"--db",       db.conninfo(), "--policy", (dir / "policy.json").string(),
                                  "--upstream", "http://127.0.0.1:" + std::to_string(upstream->port()),
                                  "--listen",   "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    args = withTenantSource(std::move(args));
    if (launcher.empty()) {
      proxy = std::make_unique<ServeProcess>(args, (dir / "proxy.err").string(), "proxy");
    } else {
      std::vector<std::string> argv = launcher;
      argv.insert(argv.end(), {std::getenv("IDEMCTL"), "proxy"});
      argv.insert(argv.end(), args.begin(), args.end());
      argv.insert(argv.end(), {"--access-log", "off"});
      proxy = std::make_unique<ServeProcess>(ServeProcess::Program{argv}, (dir / "proxy.err").string());
    }
  }
  ~RawUpstreamRig() {
    proxy.reset();
    upstream.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }

  /// Executions the upstream recorded for this key.
  [[nodiscard]] int executions(const std::string& key) const {
    std::ifstream in(dir / "ledger.txt");
    std::string line;
    int n = 0;
    while (std::getline(in, line)) n += line.substr(0, line.find(' ')) == key ? 1 : 0;
    return n;
  }
  [[nodiscard]] std::string proxyLog() const {
    std::ifstream in(dir / "proxy.err");
    return {std::istreambuf_iterator<char>(in), {}};
  }

  TestDatabase db;
  std::filesystem::path dir;
  std::unique_ptr<ServeProcess> upstream;
  std::unique_ptr<ServeProcess> proxy;
};

/// Writes `bytes` to 127.0.0.1:port and returns what comes back until the peer closes or
/// nothing more arrives for `quiet`.
inline std::string rawExchange(int port, const std::string& bytes,
                               std::chrono::milliseconds quiet = std::chrono::milliseconds(1500)) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(static_cast<uint16_t>(port));
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0 &&
      ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size())) {
    char buf[4096];
    pollfd p{fd, POLLIN, 0};
    while (::poll(&p, 1, static_cast<int>(quiet.count())) > 0) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

}  // namespace idem::test
