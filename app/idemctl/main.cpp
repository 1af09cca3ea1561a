// idemctl: the Idem command-line tool. Dispatches to the registered sub-commands.
#include <unistd.h>  // environ

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <exception>
#include <iostream>

#include "app/idemctl/command.h"
#include "app/idemctl/configuration.h"
#include "app/idemctl/help.h"
#include "app/idemctl/reload.h"

namespace idemctl {

std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

Args::Args(std::vector<std::string> argv) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) == 0 && a.size() > 2) {
      std::string name = a.substr(2);
      std::string value;
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name.resize(eq);
      } else if (i + 1 < argv.size() && argv[i + 1].rfind("--", 0) != 0) {
        value = argv[++i];
      }
      m_values[name] = value;
      m_given.emplace_back(std::move(name), std::move(value));
    } else {
      m_positional.push_back(a);
    }
  }
}

bool Args::has(std::string_view name) const { return m_values.find(name) != m_values.end(); }

std::string Args::get(std::string_view name, const std::string& fallback) const {
  auto it = m_values.find(name);
  return it == m_values.end() ? fallback : it->second;
}

std::vector<std::string> Args::getAll(std::string_view name) const {
  std::vector<std::string> values;
  for (const auto& [given, value] : m_given)
    if (given == name) values.push_back(value);
  return values;
}

std::vector<std::string> Args::unknown(const Flags& known) const {
  std::vector<std::string> out;
  // Not a structured binding: clang 14 (the sanitizer builds) cannot capture one in a lambda.
  for (const auto& given : m_values) {
    const std::string& name = given.first;
    if (std::none_of(known.begin(), known.end(), [&](const Flag& f) { return f.name == name; })) out.push_back(name);
  }
  return out;
}

std::string conninfo(const Args& args) { return args.get("db"); }

int usageError(std::string_view command, std::string_view usage, const std::string& message) {
  std::cerr << "idemctl " << command << ": " << message << "\nusage: idemctl " << command << ' ' << usage << '\n';
  return kUsage;
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool parseInt(const std::string& text, int lo, int hi, int& out) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty() || value < lo || value > hi) return false;
  out = value;
  return true;
}

}  // namespace idemctl

int main(int argc, char** argv) {
  if (argc < 2) {
    idemctl::printOverview(std::cerr);
    return idemctl::kUsage;
  }
  const std::string_view first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    idemctl::printOverview(std::cout);
    return idemctl::kOk;
  }
  if (first == "--version" || first == "-V" || first == "version") {
    idemctl::printVersion(std::cout);
    return idemctl::kOk;
  }
  const std::string name = argv[1];
  const auto& commands = idemctl::registry();
  auto it = std::find_if(commands.begin(), commands.end(), [&](const auto& c) { return c.name == name; });
  if (it == commands.end()) {
    std::cerr << "idemctl: unknown command '" << name << "'. Run 'idemctl --help' for the list.\n";
    return idemctl::kUsage;
  }
  idemctl::Args args({argv + 2, argv + argc});
  // proxy and serve take settings from --config and IDEM_* as well (configuration.h).
  if (!args.has("help") && !args.has("version") && idemctl::readsConfiguration(*it)) {
    std::string problem;
    auto merged = idemctl::withConfiguration({argv + 2, argv + argc}, *it, environ, problem);
    if (!problem.empty()) {
      std::cerr << "idemctl " << name << ": " << problem << '\n';
      return idemctl::kUsage;
    }
    args = idemctl::Args(std::move(merged));
    idemctl::rememberCommandLine(*it, {argv + 2, argv + argc});  // read again on SIGHUP
  }
  if (args.has("help")) {
    idemctl::printCommandHelp(std::cout, *it);
    return idemctl::kOk;
  }
  if (args.has("version")) {
    idemctl::printVersion(std::cout);
    return idemctl::kOk;
  }
  if (auto bad = args.unknown(it->flags); !bad.empty()) {
    std::cerr << "idemctl " << name << ": unknown option --" << bad.front() << "; it takes "
              << (it->flags.empty() ? "no options" : idemctl::flagNames(*it)) << " ('idemctl " << name
              << " --help' describes each)\n";
    return idemctl::kUsage;
  }
  try {
    return it->run(args);
  } catch (const std::exception& e) {
    std::cerr << "idemctl " << name << ": " << e.what() << '\n';
    return idemctl::kFailure;
  }
}
