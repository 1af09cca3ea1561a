#pragma once
// What `idemctl serve` and `idemctl proxy` share: the listener's flags (threads, pool, limits
// and deadlines: README "Limits and slow clients"), the access log, and running until SIGINT
// or SIGTERM while in-flight requests finish, reloading on SIGHUP (reload.h).
#include <signal.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "app/idemctl/command.h"
#include "app/idemctl/reload.h"
#include "core/endpoint/server.h"

namespace idemctl {

/// A command's own flags plus the shared listener flags (for Command::flags), and their usage.
Flags withServerFlags(Flags own);
extern const char* const kServerFlagsUsage;

/// Reads --listen, --threads, --pool, --prepared-statements, --trace-fold, the limits and the
/// deadlines into `options`. Returns "" when all are valid, else what is wrong.
std::string readServerFlags(const Args& args, idem::endpoint::ServerOptions& options);

/// Opens --access-log, starts the server, prints `announce(server)` and serves until SIGINT or
/// SIGTERM, reloading on SIGHUP with `read` (the command's reading of `args` into `options`);
/// returns the exit code (a start failure is printed with what to do).
int runServer(const Args& args, idem::endpoint::ServerOptions options, std::string_view command, std::string_view usage,
              const ReadOptions& read, const std::function<void(idem::endpoint::Server&)>& announce);

/// --access-log -|FILE|off: one JSON line per request, never interleaved across threads.
class AccessLog {
 public:
  AccessLog() = default;
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;
  ~AccessLog();
  /// Opens the target; "" when fine, else what is wrong. Sets options.accessLog unless "off".
  std::string open(const std::string& target, idem::endpoint::ServerOptions& options);
  /// Opens the target again (a reload: logrotate moved the file away), or another one; lines go
  /// to the old file until the new one is open. "" when fine, else what is wrong (the old one
  /// stays). A log that was off at start stays off: the server has no writer to give it.
  std::string reopen(const std::string& target);

 private:
  std::string switchTo(const std::string& target);

  std::mutex m_mutex;
  std::FILE* m_file = nullptr;  // null: off
  bool m_owned = false;
  bool m_started = false;  // a writer was given to the server
};

/// Blocks SIGINT, SIGTERM and SIGHUP in this thread and every thread started after it (create it
/// before the server), so they are taken by one waiting thread instead.
class StopSignals {
 public:
  StopSignals();
  /// Runs the server until a stop signal; the server then finishes in-flight requests. SIGHUP
  /// runs `reload` on the waiting thread (never on the server's).
  void serveUntilStopped(idem::endpoint::Server& server, std::string_view command,
                         const std::function<void()>& reload);

 private:
  sigset_t m_set;
};

}  // namespace idemctl
