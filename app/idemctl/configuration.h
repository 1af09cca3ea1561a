#pragma once
// Settings for the long-running commands (`proxy`, `serve`) from a TOML file and IDEM_*
// environment variables, beneath the command line: a flag beats its IDEM_* variable, which beats
// the file, which beats the default (docs/configuration.md). One name everywhere: the file's key
// `upstream-timeout` is the flag --upstream-timeout and the variable IDEM_UPSTREAM_TIMEOUT.
#include <string>
#include <vector>

#include "app/idemctl/command.h"

namespace idemctl {

/// The flag --config, which a command that reads a configuration file lists.
Flag configFlag();

/// Whether `command` lists configFlag() (simulate's own --config is another file).
[[nodiscard]] bool readsConfiguration(const Command& command);

/// The environment variable for a flag: "upstream-timeout" -> "IDEM_UPSTREAM_TIMEOUT".
[[nodiscard]] std::string environmentName(const std::string& flag);

/// The command line `argv` (after the command's name) with every setting of `command`'s flags that
/// it leaves out taken from the environment (`environment`, as environ) and then from the file
/// named by --config or IDEM_CONFIG. On a problem (the file unreadable or not TOML, a key that is
/// no flag of the command, a value of the wrong kind) returns nothing and sets `problem` to every
/// problem found, one line each with the file's line and column.
[[nodiscard]] std::vector<std::string> withConfiguration(const std::vector<std::string>& argv, const Command& command,
                                                         char** environment, std::string& problem);

}  // namespace idemctl
