#include "core/policy/route_template.h"

#include <algorithm>
#include <vector>

#include "core/policy/route.h"

namespace idem::policy {
namespace {

/// The segments of a path ("/a/b" -> a, b; "/" -> none). Canonical paths have no empty ones.
std::vector<std::string_view> segmentsOf(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t start = 1;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool isParameter(std::string_view segment) { return segment.size() >= 2 && segment.front() == '{' && segment.back() == '}'; }
bool isWildcard(std::string_view segment) { return isParameter(segment) && segment[segment.size() - 2] == '*'; }

bool isName(std::string_view name) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  return !name.empty() && letter(name.front()) &&
         std::all_of(name.begin(), name.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

/// "METHOD /path" -> ("METHOD", "/path"); the path is empty when there is no space.
std::pair<std::string_view, std::string_view> split(std::string_view route) {
  const auto space = route.find(' ');
  if (space == std::string_view::npos) return {route, {}};
  return {route.substr(0, space), route.substr(space + 1)};
}

/// One parameter segment ("{id}", "{path*}") checked; its canonical spelling, or "" with `problem`.
std::string parameter(std::string_view raw, bool last, std::vector<std::string>& names, std::string& problem) {
  const bool whole = raw.front() == '{' && raw.back() == '}' && std::count(raw.begin(), raw.end(), '{') == 1 &&
                     std::count(raw.begin(), raw.end(), '}') == 1;
  if (!whole) {
    const auto opens = std::count(raw.begin(), raw.end(), '{'), closes = std::count(raw.begin(), raw.end(), '}');
    problem = opens != closes ? "the braces in segment \"" + std::string(raw) + "\" are unbalanced"
                              : "a parameter must be a whole segment (\"/{id}\"), not part of \"" + std::string(raw) +
                                    "\"";
    return {};
  }
  std::string_view name = raw.substr(1, raw.size() - 2);
  const bool rest = name.ends_with('*');
  if (rest) name.remove_suffix(1);
  if (name.empty()) {
    problem = "a parameter needs a name, e.g. {id}" + std::string(rest ? " or {path*}" : "");
    return {};
  }
  if (!isName(name)) {
    problem = "\"" + std::string(name) + "\" is not a parameter name (letters, digits and _, not starting with a digit)";
    return {};
  }
  if (rest && !last) {
    problem = "the wildcard {" + std::string(name) + "*} must be the last segment";
    return {};
  }
  if (std::find(names.begin(), names.end(), name) != names.end()) {
    problem = "the parameter {" + std::string(name) + "} is named twice";
    return {};
  }
  names.emplace_back(name);
  return "{" + std::string(name) + (rest ? "*}" : "}");
}

}  // namespace

std::optional<std::string> canonicalPathTemplate(std::string_view path, std::string& problem) {
  const std::vector<std::string_view> raw = segmentsOf(path);
  const bool templated = std::any_of(raw.begin(), raw.end(), [](std::string_view s) {
    return s.find_first_of("{}") != std::string_view::npos || s.find_first_not_of('*') == std::string_view::npos;
  });
  if (!templated) {
    auto canonical = canonicalPath(path);
    if (!canonical) problem = "the path has a malformed %-escape or an encoded control character";
    return canonical;
  }
  std::string out;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const std::string_view s = raw[i];
    if (s.find_first_not_of('*') == std::string_view::npos) {
      problem = "\"" + std::string(s) + "\" is not a wildcard here; write a named one as the last segment, e.g. {path*}";
      return std::nullopt;
    }
    if (s.find_first_of("{}") != std::string_view::npos) {
      const std::string p = parameter(s, i + 1 == raw.size(), names, problem);
      if (p.empty()) return std::nullopt;
      out += "/" + p;
      continue;
    }
    // A literal segment: canonical on its own; "." and ".." would move a parameter's position.
    const auto one = canonicalPath("/" + std::string(s));
    if (!one) {
      problem = "the path has a malformed %-escape or an encoded control character";
      return std::nullopt;
    }
    if (*one == "/") {
      problem = "a route with parameters may not contain \".\" or \"..\" segments (\"" + std::string(s) + "\")";
      return std::nullopt;
    }
    out += *one;
  }
  return out;
}

bool isRouteTemplate(std::string_view route) { return route.find('{') != std::string_view::npos; }

std::optional<std::string> templateRank(std::string_view route, std::string_view request) {
  const auto [method, path] = split(route);
  const auto [requestMethod, requestPath] = split(request);
  if (method != requestMethod) return std::nullopt;
  const std::vector<std::string_view> want = segmentsOf(path), have = segmentsOf(requestPath);
  std::string rank;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (isWildcard(want[i])) {
      if (i >= have.size()) return std::nullopt;  // a wildcard takes at least one segment
      rank += '2';
      return rank;
    }
    if (i >= have.size()) return std::nullopt;
    if (isParameter(want[i])) rank += '1';
    else if (want[i] == have[i]) rank += '0';
    else return std::nullopt;
  }
  if (want.size() != have.size()) return std::nullopt;
  return rank;
}

std::string routeShape(std::string_view route) {
  const auto [method, path] = split(route);
  if (!isRouteTemplate(path)) return std::string(route);
  std::string out(method);
  out += ' ';
  for (const std::string_view s : segmentsOf(path))
    out += "/" + std::string(isWildcard(s) ? "{*}" : isParameter(s) ? "{}" : s);
  return out;
}

}  // namespace idem::policy
