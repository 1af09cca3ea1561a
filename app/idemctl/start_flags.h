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
/// `own` plus the start flags' names (for Command::options).
std::vector<std::string_view> withStartFlags(std::vector<std::string_view> own);

/// --lock-timeout (every command that waits for the store's locks at start): "" when absent or
/// valid (then in `out`), else what is wrong.
std::string readLockTimeout(const Args& args, std::chrono::milliseconds& out);

/// Reads --lock-timeout into `options`. "" when valid, else what is wrong.
std::string readStartFlags(const Args& args, idem::endpoint::ServerOptions& options);

/// Says on stderr when the policy this server recorded is not the one the sweeper and the
/// console follow (only the admin or the owner chooses: `idemctl policy activate`).
void announcePolicyChoice(const idem::endpoint::Server& server, std::string_view command);

}  // namespace idemctl
