#include "app/idemctl/reload.h"

#include <unistd.h>  // environ

#include <algorithm>
#include <array>
#include <iostream>

#include "app/idemctl/configuration.h"
#include "app/idemctl/server_flags.h"
#include "app/idemctl/start_flags.h"

namespace idemctl {
namespace {

struct Invocation {
  const Command* command = nullptr;
  std::vector<std::string> argv;
};

Invocation& invocation() {
  static Invocation given;
  return given;
}

// The tenant flags shape the policy's tenant source; the server refuses a reload that changes it.
constexpr std::array<std::string_view, 6> kReloadable{"policy",        "config",
                                                      "access-log",    "tenant-header",
                                                      "tenant-from-authorization", "single-tenant"};

std::string shown(const Args& args, const Flag& flag) {
  if (!args.has(flag.name)) return "the default, " + flag.fallback;
  return flag.value.empty() ? "on" : args.get(flag.name);
}

/// The settings in force after a reload: the reloadable ones from `now`, the others as running.
Args blend(const Args& running, const Args& now, const Flags& flags) {
  std::vector<std::string> argv;
  for (const Flag& f : flags) {
    const Args& from = reloadsOnSighup(f.name) ? now : running;
    if (from.has(f.name)) argv.push_back("--" + f.name + "=" + from.get(f.name));
  }
  return Args(std::move(argv));
}

}  // namespace

bool reloadsOnSighup(std::string_view flag) {
  return std::find(kReloadable.begin(), kReloadable.end(), flag) != kReloadable.end();
}

void rememberCommandLine(const Command& command, std::vector<std::string> argv) {
  invocation() = {&command, std::move(argv)};
}

Reloader::Reloader(const Args& started, std::string_view command, ReadOptions read, AccessLog& log)
    : m_running(started), m_command(command), m_read(std::move(read)), m_log(log) {}

void Reloader::say(const std::string& line) const {
  std::cerr << "idemctl " << m_command << ": " << line << std::endl;  // one line per step, flushed for journald
}

std::string Reloader::reread(std::optional<Args>& args, idem::endpoint::ServerOptions& options) const {
  const Invocation& given = invocation();
  if (given.command == nullptr) return "the command line was not kept, so the settings cannot be read again";
  std::string problem;
  auto merged = withConfiguration(given.argv, *given.command, environ, problem);
  if (!problem.empty()) return problem;
  args.emplace(std::move(merged));
  return m_read(*args, options);
}

void Reloader::reopenAccessLog(const Args& now) {
  const std::string target = now.get("access-log", "-");
  if (auto bad = m_log.reopen(target); !bad.empty()) {
    say("reload: " + bad + "; the access log stays as it was");
    return;
  }
  if (target != "-" && target != "off") say("reload: access log reopened: " + target);
}

void Reloader::reload(idem::endpoint::Server& server) {
  const int before = server.policyVersion();
  say("SIGHUP: reading the settings and the policy file again");
  std::optional<Args> now;
  idem::endpoint::ServerOptions options;
  const std::string problem = reread(now, options);
  // logrotate moved the file away and waits for this reopen, whatever else is wrong.
  reopenAccessLog(problem.empty() ? *now : m_running);
  const std::string kept = "policy version " + std::to_string(before) + " stays in force";
  if (!problem.empty()) {
    server.host().metrics().policyReload(false);
    say("reload refused, " + kept + ":\n" + problem);
    return;
  }
  const Flags& flags = invocation().command->flags;
  for (const Flag& f : flags) {
    if (reloadsOnSighup(f.name)) continue;
    if (m_running.has(f.name) == now->has(f.name) && m_running.get(f.name) == now->get(f.name)) continue;
    say("reload: needs a restart: --" + f.name + " (running with " + shown(m_running, f) + "; the settings now say " +
        shown(*now, f) + "); ignored until then");
  }
  const idem::endpoint::PolicyReload result = server.reloadPolicy(std::move(options.policy));
  server.host().metrics().policyReload(result.applied);
  if (!result.applied) {
    say("reload refused, " + kept + ": " + result.refusal);
    return;
  }
  m_running = blend(m_running, *now, flags);
  if (result.version == before) {
    say("reload applied: the policy is unchanged (version " + std::to_string(before) + ")");
    return;
  }
  say("reload applied: policy version " + std::to_string(result.version) + " (was " + std::to_string(before) +
      ") for the requests that start from now on; requests in flight finish under version " +
      std::to_string(before));
  announcePolicyChoice(server, m_command);
}

}  // namespace idemctl
