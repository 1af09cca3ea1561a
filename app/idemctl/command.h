#pragma once
// Sub-command registry: each cmd_*.cpp registers one command with IDEMCTL_COMMAND.
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace idemctl {

/// Exit codes shared by every command (documented in the README).
enum Exit : int {
  kOk = 0,
  kFailure = 1,       // the command ran and found a problem (e.g. key not found)
  kUsage = 2,         // bad arguments or bad input file
  kUnavailable = 3,   // the store could not be reached
};

/// One --flag a command accepts. `idemctl COMMAND --help` is made from these and the parser
/// refuses any name not listed, so no flag is accepted without being described.
struct Flag {
  std::string name;      // without dashes
  std::string value;     // what follows it (N, FILE, DURATION); empty for a switch
  std::string help;      // what it does, one sentence or two
  std::string fallback;  // the default as a user would write it, or "required" ("required unless --x")

  static Flag option(std::string name, std::string value, std::string help, std::string fallback) {
    return {std::move(name), std::move(value), std::move(help), std::move(fallback)};
  }
  /// A switch: present or not; its default is off.
  static Flag toggle(std::string name, std::string help) { return {std::move(name), {}, std::move(help), "off"}; }
};
using Flags = std::vector<Flag>;

/// `own` then `more`, for commands that share flags (server_flags.h, start_flags.h).
Flags operator+(Flags own, const Flags& more);

/// --db, which every command that reaches a store takes.
Flag dbFlag();

/// Parsed `--name value` / `--flag` arguments after the sub-command.
class Args {
 public:
  Args(std::vector<std::string> argv);
  [[nodiscard]] bool has(std::string_view name) const;
  [[nodiscard]] std::string get(std::string_view name, const std::string& fallback = {}) const;
  /// Every value of an option given more than once (get() keeps the last), in order.
  [[nodiscard]] std::vector<std::string> getAll(std::string_view name) const;
  [[nodiscard]] const std::vector<std::string>& positional() const { return m_positional; }
  /// Names given that are not in `known`; commands report them as usage errors.
  [[nodiscard]] std::vector<std::string> unknown(const Flags& known) const;

 private:
  std::map<std::string, std::string, std::less<>> m_values;
  std::vector<std::pair<std::string, std::string>> m_given;  // every --name value, in order
  std::vector<std::string> m_positional;
};

struct Command {
  std::string name;
  std::string summary;
  std::string usage;
  Flags flags;  // every --name it accepts (the parser refuses others), in the order --help lists them
  std::function<int(const Args&)> run;
};

std::vector<Command>& registry();

struct Registrar {
  explicit Registrar(Command command) { registry().push_back(std::move(command)); }
};

/// Connection string from --db, else empty (libpq then reads PG* variables and service files).
std::string conninfo(const Args& args);

/// Prints "idemctl COMMAND: MESSAGE" and the command's usage line to stderr; returns kUsage.
int usageError(std::string_view command, std::string_view usage, const std::string& message);

/// A whole number from lo to hi written as nothing but digits (and a sign); false otherwise.
bool parseInt(const std::string& text, int lo, int hi, int& out);

/// "a,b,,c" -> {"a", "b", "c"}: a comma-separated option's items, empty ones dropped.
std::vector<std::string> splitList(const std::string& text);

}  // namespace idemctl

#define IDEMCTL_CONCAT_(a, b) a##b
#define IDEMCTL_CONCAT(a, b) IDEMCTL_CONCAT_(a, b)
#define IDEMCTL_COMMAND(...) \
  static const ::idemctl::Registrar IDEMCTL_CONCAT(idemctl_registrar_, __LINE__){::idemctl::Command{__VA_ARGS__}}
