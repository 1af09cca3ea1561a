#include "core/server/target.h"

#include "core/text/hex.h"

namespace idem::server {
namespace {

using text::hexValue;

// Decodes %XX (and '+' as a space in a query component). A '%' without two hex digits, or a
// decoded control character (NUL, CR, LF... which no route or key may contain), is an error.
bool decode(std::string_view in, bool plusIsSpace, std::string& out, std::string& error, const char* where) {
  out.clear();
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      const bool twoFollow = i + 2 < in.size();
      const int hi = twoFollow ? hexValue(in[i + 1]) : -1;
      const int lo = twoFollow ? hexValue(in[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        error = std::string("the ") + where + " has a '%' not followed by two hexadecimal digits";
        return false;
      }
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plusIsSpace) {
      c = ' ';
    }
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      error = std::string("the ") + where + " contains a control character";
      return false;
    }
    out += c;
  }
  return true;
}

}  // namespace

std::optional<Target> parseTarget(std::string_view target, std::string& error) {
  if (target.empty() || target.front() != '/') {
    error = "the request target must be a path starting with '/'";
    return std::nullopt;
  }
  const auto question = target.find('?');
  Target t;
  if (!decode(target.substr(0, question), false, t.path, error, "path")) return std::nullopt;
  if (question == std::string_view::npos) return t;
  std::string_view query = target.substr(question + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    std::string name, value;
    if (!decode(pair.substr(0, eq), true, name, error, "query") ||
        (eq != std::string_view::npos && !decode(pair.substr(eq + 1), true, value, error, "query")))
      return std::nullopt;
    t.query.emplace(std::move(name), std::move(value));
  }
  return t;
}

}  // namespace idem::server
