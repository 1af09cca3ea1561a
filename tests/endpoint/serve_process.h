#pragma once
// `idemctl serve` as a child process, for the tests that kill it (SIGKILL) or stop it (SIGTERM).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace idem::test {

class ServeProcess {
 public:
  /// Starts `idemctl serve <args>` (or another listening command: `proxy`) and waits for its
  /// "listening on http://…" line. With stderrPath, the process's stderr (where operators read
  /// errors) goes to that file.
  explicit ServeProcess(const std::vector<std::string>& args, const std::string& stderrPath = {},
                        const std::string& command = "serve") {
    const char* exe = std::getenv("IDEMCTL");
    if (!exe) throw std::runtime_error("IDEMCTL is not set: run through ctest");
    std::vector<std::string> argv{exe, command};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--access-log", "off"});
    start(argv, stderrPath);
  }
  /// Any program (argv[0] a path) that prints "… http://127.0.0.1:PORT …" once it listens.
  struct Program {
    std::vector<std::string> argv;
  };
  explicit ServeProcess(Program program, const std::string& stderrPath = {}) { start(program.argv, stderrPath); }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;
  ~ServeProcess() {
    if (m_pid > 0) kill(SIGKILL);
    if (m_out >= 0) close(m_out);
  }

  [[nodiscard]] int port() const { return m_port; }
  /// The child's process id (for /proc and prlimit); -1 once it is gone.
  [[nodiscard]] pid_t pid() const { return m_pid; }
  /// The admin listener's port named in the banner ("admin http://127.0.0.1:PORT"); 0 without one.
  [[nodiscard]] int adminPort() const {
    const auto at = m_banner.find("admin http://127.0.0.1:");
    return at == std::string::npos ? 0 : std::stoi(m_banner.substr(at + 23));
  }
  /// The line the process printed when it began listening.
  [[nodiscard]] const std::string& banner() const { return m_banner; }
  /// Sends a signal and, for SIGKILL, reaps the process.
  void kill(int sig) {
    if (m_pid <= 0) return;
    ::kill(m_pid, sig);
    if (sig == SIGKILL) wait();
  }
  /// Still running (not exited, not killed)? Reaps it when it is gone.
  bool alive() {
    if (m_pid <= 0) return false;
    int status = 0;
    if (waitpid(m_pid, &status, WNOHANG) == 0) return true;
    m_pid = -1;
    return false;
  }
  /// Waits for the exit; returns the exit status (128 + signal when killed).
  int wait() {
    int status = 0;
    waitpid(m_pid, &status, 0);
    m_pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  void start(std::vector<std::string> argv, const std::string& stderrPath) {
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    if (!stderrPath.empty())
      posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, stderrPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (posix_spawn(&m_pid, argv[0].c_str(), &fa, nullptr, cargv.data(), environ) != 0)
      throw std::runtime_error("spawn failed: " + argv[0]);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    m_out = out[0];
    std::string line;
    char c;
    while (read(m_out, &c, 1) == 1 && c != '\n') line += c;
    const auto at = line.find("http://127.0.0.1:");
    if (at == std::string::npos) {
      kill(SIGKILL);
      throw std::runtime_error(argv[0] + " " + (argv.size() > 1 ? argv[1] : "") + " did not start: " + line);
    }
    m_port = std::stoi(line.substr(at + 17));
    m_banner = line;
  }

  pid_t m_pid = -1;
  int m_out = -1;
  int m_port = 0;
  std::string m_banner;
};

}  // namespace idem::test
