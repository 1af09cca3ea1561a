#include "app/idemctl/start_flags.h"

#include <iostream>

#include "core/policy/duration.h"

namespace idemctl {

const char* const kStartFlagsUsage = "[--lock-timeout DURATION]";

std::vector<std::string_view> withStartFlags(std::vector<std::string_view> own) {
  own.push_back("lock-timeout");
  return own;
}

std::string readLockTimeout(const Args& args, std::chrono::milliseconds& out) {
  if (!args.has("lock-timeout")) return {};
  const auto d = idem::policy::parseDuration(args.get("lock-timeout"));
  if (!d || d->count() <= 0) return "--lock-timeout must be a positive duration such as 10s or 2m";
  out = *d;
  return {};
}

std::string readStartFlags(const Args& args, idem::endpoint::ServerOptions& options) {
  return readLockTimeout(args, options.lockTimeout);
}

void announcePolicyChoice(const idem::endpoint::Server& server, std::string_view command) {
  const int recorded = server.policyVersion();
  const int inForce = server.policyInForce();
  if (inForce == recorded) return;
  std::cerr << "idemctl " << command << ": enforcing policy version " << recorded << "; the sweeper and the console follow "
            << (inForce ? "version " + std::to_string(inForce) : std::string("no chosen policy (built-in retentions)"))
            << ". To make this one the policy in force, the admin runs: idemctl policy activate " << recorded << '\n';
}

}  // namespace idemctl
