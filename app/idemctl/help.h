#pragma once
// What `idemctl --help`, `idemctl COMMAND --help` and `idemctl --version` print: made from the
// registry (command.h), so every flag the parser accepts is described with its default.
#include <iosfwd>

#include "app/idemctl/command.h"

namespace idemctl {

/// "idemctl 0.1.0 (schema 22)": the project's version and the schema version this build needs.
void printVersion(std::ostream& out);
/// Every command with its summary.
void printOverview(std::ostream& out);
/// One command's usage, summary and each flag with what it does and its default.
void printCommandHelp(std::ostream& out, const Command& command);
/// "--a, --b and --c": the names a command accepts, for an unknown option's message.
std::string flagNames(const Command& command);

}  // namespace idemctl
