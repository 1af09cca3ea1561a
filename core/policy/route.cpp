#include "core/policy/route.h"

#include <vector>

#include "core/text/hex.h"

namespace idem::policy {
namespace {

using text::hexValue;

bool isUnreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

char lower(unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c); }

void appendEscape(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out += '%';
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

/// One segment in canonical form (without its ";parameters"); false when it is malformed.
bool canonicalSegment(std::string_view raw, std::string& out) {
  raw = raw.substr(0, raw.find(';'));
  for (std::size_t i = 0; i < raw.size(); ++i) {
    auto c = static_cast<unsigned char>(raw[i]);
    if (c == '%') {
      if (i + 2 >= raw.size()) return false;
      const int hi = hexValue(raw[i + 1]), lo = hexValue(raw[i + 2]);
      if (hi < 0 || lo < 0) return false;
      c = static_cast<unsigned char>(hi * 16 + lo);
      i += 2;
      if (c < 0x20 || c == 0x7f) return false;  // an encoded control is never a route
      if (isUnreserved(c)) out += lower(c);
      else appendEscape(out, c);
      continue;
    }
    if (c <= 0x20 || c == 0x7f) return false;
    if (c >= 0x80) appendEscape(out, c);
    else out += lower(c);
  }
  return true;
}

}  // namespace

std::optional<std::string> canonicalPath(std::string_view path) {
  path = path.substr(0, path.find_first_of("?#"));
  if (!path.starts_with('/')) return std::nullopt;
  std::vector<std::string> segments;
  std::string segment;
  std::size_t start = 1;
  for (;;) {
    const std::size_t end = path.find('/', start);
    segment.clear();
    if (!canonicalSegment(path.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start),
                          segment))
      return std::nullopt;
    if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!segment.empty() && segment != ".") {
      segments.push_back(segment);
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (segments.empty()) return std::string(1, '/');
  std::string out;
  out.reserve(path.size());
  for (const auto& s : segments) {
    out.push_back('/');
    out.append(s);
  }
  return out;
}

std::optional<std::string> canonicalRoute(std::string_view method, std::string_view path) {
  auto p = canonicalPath(path);
  if (!p) return std::nullopt;
  std::string route;
  route.reserve(method.size() + 1 + p->size());
  route.append(method);
  route += ' ';
  route += *p;
  return route;
}

bool isSafeMethod(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS" || method == "TRACE";
}

}  // namespace idem::policy
