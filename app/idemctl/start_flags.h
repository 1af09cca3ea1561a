#pragma once
// What `idemctl serve` and `idemctl proxy` check at start besides the listener (server_flags.h):
// how long they wait for the store's locks, and which recorded policy is in force.
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "app/idemctl/command.h"
#include "core/endpoint/server.h"

namespace idemctl {

extern const char* const kStartFlagsUsage;
/// `own` plus the start flags (for Command::flags).
Flags withStartFlags(Flags own);
/// --lock-timeout alone, for the commands that take no other start flag.
Flag lockTimeoutFlag();

/// --lock-timeout (every command that waits for the store's locks at start): "" when absent or
/// valid (then in `out`), else what is wrong.
std::string readLockTimeout(const Args& args, std::chrono::milliseconds& out);

/// Reads --lock-timeout and the tenant flags (--tenant-header, --tenant-from-authorization,
/// --single-tenant, --trusted-peers, --accept-tenant-change) into `options`; call it after
/// readServerFlags (it checks the listen address). `requireSource`: the proxy refuses a policy
/// with no tenant source. "" when valid, else what is wrong; warnings go to stderr.
std::string readStartFlags(const Args& args, idem::endpoint::ServerOptions& options, std::string_view command,
                           bool requireSource);

/// Says on stderr when the policy this server recorded is not the one the sweeper and the
/// console follow (only the admin or the owner chooses: `idemctl policy activate`).
void announcePolicyChoice(const idem::endpoint::Server& server, std::string_view command);

}  // namespace idemctl
