#include "app/idemctl/help.h"

#include <algorithm>
#include <ostream>

#include "app/idemctl/configuration.h"
#include "app/idemctl/reload.h"
#include "core/store/migrations.h"

#ifndef IDEM_VERSION
#error "IDEM_VERSION comes from the project's version (app/idemctl/CMakeLists.txt)"
#endif

namespace idemctl {

Flags operator+(Flags own, const Flags& more) {
  own.insert(own.end(), more.begin(), more.end());
  return own;
}

Flag dbFlag() {
  return Flag::option("db", "CONNINFO",
                      "The store: libpq keywords (host=... dbname=...), a postgresql:// URI or service=NAME.",
                      "libpq's PG* environment variables and defaults");
}

void printVersion(std::ostream& out) {
  out << "idemctl " << IDEM_VERSION << " (schema " << idem::store::expectedSchemaVersion() << ")\n";
}

void printOverview(std::ostream& out) {
  out << "Usage: idemctl COMMAND [OPTIONS]\n"
         "Idem: HTTP Idempotency-Key enforcement on a PostgreSQL store.\n\n"
         "Commands:\n";
  auto commands = registry();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (const auto& c : commands) {
    out << "  " << c.name << std::string(c.name.size() < 10 ? 10 - c.name.size() : 1, ' ') << c.summary << '\n';
  }
  out << "\nOptions:\n"
         "  --help     this overview; 'idemctl COMMAND --help' describes a command's options\n"
         "  --version  the version and the schema version it needs\n"
         "\nExit status:\n"
         "  0 done, 1 the command ran and found a problem, 2 bad arguments or input, 3 the store is unreachable.\n";
}

void printCommandHelp(std::ostream& out, const Command& command) {
  out << "Usage: idemctl " << command.name << ' ' << command.usage << "\n" << command.summary << "\n";
  if (command.flags.empty()) return;
  out << "\nOptions:\n";
  for (const auto& f : command.flags) {
    // help2man turns each indented "--name VALUE" line and the lines under it into one entry.
    out << "  --" << f.name << (f.value.empty() ? "" : " " + f.value) << "\n      " << f.help;
    // "required", "required unless --key": said as is; anything else is the default.
    out << (f.fallback.rfind("required", 0) == 0 ? " (" + f.fallback + ")" : " (default: " + f.fallback + ")") << '\n';
  }
  if (!readsConfiguration(command)) return;
  std::string reloaded;
  for (const auto& f : command.flags)
    if (reloadsOnSighup(f.name)) reloaded += (reloaded.empty() ? "--" : ", --") + f.name;
  out << "\nReloading (SIGHUP, e.g. systemctl reload):\n"
         "  The configuration file, the IDEM_* variables and the policy file are read again. A valid policy is\n"
         "  recorded in the store and enforced for the requests that start afterwards; requests in flight finish\n"
         "  under theirs. A policy with problems, or one that would change where tenants come from, is refused\n"
         "  and the running one stays. The access log is reopened. Reloaded: "
      << reloaded
      << ".\n  Every other setting needs a restart: the log names each one that changed, and it is ignored.\n";
}

std::string flagNames(const Command& command) {
  std::string out;
  for (std::size_t i = 0; i < command.flags.size(); ++i)
    out += (i == 0 ? "--" : i + 1 == command.flags.size() ? " and --" : ", --") + command.flags[i].name;
  return out;
}

}  // namespace idemctl
