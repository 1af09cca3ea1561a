// The configuration file (TOML: the format operators already edit for many services, with
// Debian's libtomlplusplus) and IDEM_* variables, merged beneath the command line. The result is a
// command line again, so every value meets the same checks and messages as a flag's.
#include "app/idemctl/configuration.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include <toml++/toml.h>

namespace idemctl {
namespace {

const Flag* findFlag(const Command& command, std::string_view name) {
  const auto it = std::find_if(command.flags.begin(), command.flags.end(), [&](const Flag& f) { return f.name == name; });
  return it == command.flags.end() ? nullptr : &*it;
}

std::optional<bool> switchWord(std::string value) {
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
  if (value == "1" || value == "true" || value == "on" || value == "yes") return true;
  if (value == "0" || value == "false" || value == "off" || value == "no" || value.empty()) return false;
  return std::nullopt;
}

/// One value of the file as the command line writes it; nullopt with `why` when it is no value
/// a flag takes. A boolean is a switch's state, or on/off for a flag that takes a value.
std::optional<std::string> scalar(const toml::node& node, const Flag& flag, std::string& why) {
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  if (const auto* b = node.as_boolean()) return b->get() ? "on" : "off";
  why = "must be a string" + std::string(flag.value.empty() ? " or true/false" : "") + " such as the flag takes (" +
        (flag.value.empty() ? "a switch" : flag.value) + ")";
  return std::nullopt;
}

std::string where(const std::string& path, const toml::source_region& at) {
  return path + ": line " + std::to_string(at.begin.line) + ", column " + std::to_string(at.begin.column) + ": ";
}

}  // namespace

Flag configFlag() {
  return Flag::option("config", "FILE",
                      "A TOML file of settings: each key a flag's name (upstream-timeout = \"30s\"). A flag on the "
                      "command line beats its IDEM_* variable (IDEM_UPSTREAM_TIMEOUT), which beats the file; "
                      "also IDEM_CONFIG.",
                      "none");
}

bool readsConfiguration(const Command& command) {
  const Flag* flag = findFlag(command, "config");
  return flag != nullptr && flag->help == configFlag().help;
}

std::string environmentName(const std::string& flag) {
  std::string out = "IDEM_";
  for (const char c : flag) out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> withConfiguration(const std::vector<std::string>& argv, const Command& command,
                                           char** environment, std::string& problem) {
  const Args given(argv);
  std::map<std::string, std::string, std::less<>> variables;
  for (char** e = environment; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (const auto eq = entry.find('='); entry.starts_with("IDEM_") && eq != std::string_view::npos)
      variables.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }

  std::set<std::string> settled;  // by the command line, then by the environment
  for (const Flag& f : command.flags)
    if (given.has(f.name)) settled.insert(f.name);
  std::vector<std::pair<toml::source_position, std::string>> problems;  // file problems sort by place
  std::vector<std::string> fromEnvironment;
  for (const Flag& f : command.flags) {
    const auto it = variables.find(environmentName(f.name));
    if (it == variables.end() || !settled.insert(f.name).second) continue;
    if (!f.value.empty()) {
      fromEnvironment.push_back("--" + f.name + "=" + it->second);
    } else if (const auto on = switchWord(it->second); !on) {
      problems.push_back({{}, it->first + "=" + it->second + " is not a switch's value (use 1 or 0, on or off)"});
    } else if (*on) {
      fromEnvironment.push_back("--" + f.name + "=");
    }
  }

  std::vector<std::string> fromFile;
  const auto configVariable = variables.find("IDEM_CONFIG");
  const std::string path = given.has("config")                 ? given.get("config")
                           : configVariable != variables.end() ? configVariable->second
                                                                : std::string();
  if (!path.empty()) {
    toml::table table;
    try {
      table = toml::parse_file(path);
    } catch (const toml::parse_error& e) {
      problem = where(path, e.source()) + "not a usable TOML file: " + std::string(e.description());
      return {};
    }
    for (auto&& [key, node] : table) {
      const std::string name(key.str());
      const Flag* flag = name == "config" ? nullptr : findFlag(command, name);
      if (flag == nullptr) {
        problems.push_back({key.source().begin, where(path, key.source()) + "\"" + name + "\" is not a setting of idemctl " +
                                                    command.name + " (the keys are its flags' names; idemctl " +
                                                    command.name + " --help lists them)"});
        continue;
      }
      std::vector<std::string> values;
      std::string why;
      const toml::array* many = node.as_array();
      if (many == nullptr) {
        if (auto v = scalar(node, *flag, why)) values.push_back(*v);
      } else {
        for (const auto& element : *many)
          if (auto v = scalar(element, *flag, why)) values.push_back(*v);
      }
      if (!why.empty()) {
        problems.push_back({node.source().begin, where(path, node.source()) + name + ": " + why});
        continue;
      }
      if (settled.count(name) > 0) continue;
      for (const auto& v : values) {
        if (!flag->value.empty()) {
          fromFile.push_back("--" + name + "=" + v);
        } else if (const auto on = switchWord(v); !on) {
          problems.push_back({node.source().begin, where(path, node.source()) + name + ": \"" + v +
                                                       "\" is not a switch's value (use true or false)"});
        } else if (*on) {
          fromFile.push_back("--" + name + "=");
        }
      }
    }
  }
  if (!problems.empty()) {
    std::stable_sort(problems.begin(), problems.end(), [](const auto& a, const auto& b) {
      return std::pair(a.first.line, a.first.column) < std::pair(b.first.line, b.first.column);
    });
    for (const auto& [at, text] : problems) problem += (problem.empty() ? "" : "\n") + text;
    return {};
  }
  // Later values win (Args keeps the last of a name): the file, then the environment, then argv.
  std::vector<std::string> merged = std::move(fromFile);
  merged.insert(merged.end(), fromEnvironment.begin(), fromEnvironment.end());
  merged.insert(merged.end(), argv.begin(), argv.end());
  return merged;
}

}  // namespace idemctl
