#pragma once
// SIGHUP on `idemctl serve` and `idemctl proxy` (docs/proxy.md, "Reloading"): the settings
// are read again as at start (the command line, IDEM_* variables, the --config file) and the
// policy file with them. A good policy is recorded and put in force for the requests that start
// from then on; a policy with problems is refused whole and the one in force stays. The access
// log is reopened (logrotate's convention). Any other setting that changed needs a restart: the
// log says which, and it is ignored.
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "app/idemctl/command.h"
#include "core/endpoint/server.h"

namespace idemctl {

class AccessLog;

/// The settings a reload applies: the policy (and the tenant flags that shape it; a change of
/// tenant source is still refused), the access log, and the file they come from.
[[nodiscard]] bool reloadsOnSighup(std::string_view flag);

/// A command's reading of its settings into server options (the policy, the listener, the tenant
/// flags, its own): "" when valid, else what is wrong. Run at start and again on each reload.
using ReadOptions = std::function<std::string(const Args& args, idem::endpoint::ServerOptions& options)>;

/// The command line as given (after the command's name): main keeps it so that a reload merges
/// the environment and the configuration file beneath it again (configuration.h).
void rememberCommandLine(const Command& command, std::vector<std::string> argv);

class Reloader {
 public:
  /// `started`: the settings the server started with; `log`: the access log to reopen.
  Reloader(const Args& started, std::string_view command, ReadOptions read, AccessLog& log);
  /// Reads everything again and applies what may change; every step is said on stderr.
  /// Called on the signal thread, never on the server's.
  void reload(idem::endpoint::Server& server);

 private:
  /// "" when the settings could be read (then in `args` and `options`), else every problem.
  std::string reread(std::optional<Args>& args, idem::endpoint::ServerOptions& options) const;
  void reopenAccessLog(const Args& now);
  void say(const std::string& line) const;

  Args m_running;  // the settings in force: the start's, with the reloadable ones as last applied
  std::string m_command;
  ReadOptions m_read;
  AccessLog& m_log;
};

}  // namespace idemctl
