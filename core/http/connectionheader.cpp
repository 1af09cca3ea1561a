#include "core/http/connectionheader.h"

#include <algorithm>

namespace idem::http {
namespace {

std::string asciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string_view trimmed(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

}  // namespace

std::vector<std::string> connectionOptions(const Headers& headers) {
  std::vector<std::string> names;
  for (const auto& [name, value] : headers) {
    if (!equalsIgnoreCase(name, "Connection")) continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const auto token = trimmed(rest.substr(0, comma));
      if (!token.empty()) names.push_back(asciiLower(token));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return names;
}

std::optional<std::string> namedInConnection(const Headers& headers, const std::vector<std::string>& fields) {
  const auto listed = connectionOptions(headers);
  for (const auto& f : fields)
    if (!f.empty() && std::find(listed.begin(), listed.end(), asciiLower(f)) != listed.end()) return f;
  return std::nullopt;
}

}  // namespace idem::http
