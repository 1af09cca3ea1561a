// RFC 8785 (JCS) number and string formatting, the one copy both serialisers use.
#include "core/fingerprint/jcs.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/fingerprint/fingerprint.h"

namespace idem::fp {

void appendJcsNumber(std::string& out, double x) {
  if (!std::isfinite(x)) throw InvalidJson("NaN and Infinity have no JSON form (RFC 8785 §3.2.2.3)");
  if (x == 0) {  // both +0 and -0
    out.push_back('0');
    return;
  }
  if (x < 0) {
    out.push_back('-');
    x = -x;
  }
  // Scientific form gives the shortest round-trip digits as "d.ddde+XX".
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));
  const std::size_t e = sci.find('e');
  char digits[32];  // at most 17 significant digits round-trip a double
  int k = 0;        // ECMA-262 names: k digits, value = digits × 10^(n−k)
  for (const char c : sci.substr(0, e))
    if (c != '.') digits[k++] = c;
  int exponent = 0;
  std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exponent);
  const std::string_view d(digits, static_cast<std::size_t>(k));

  const int n = exponent + 1;
  if (k <= n && n <= 21) {
    out += d;
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += d.substr(0, static_cast<std::size_t>(n));
    out.push_back('.');
    out += d.substr(static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += d;
  } else {
    out.push_back(d[0]);
    if (k > 1) {
      out.push_back('.');
      out += d.substr(1);
    }
    out.push_back('e');
    out.push_back(n - 1 < 0 ? '-' : '+');
    out += std::to_string(std::abs(n - 1));
  }
}

void appendJcsEscaped(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && c != '"' && c != '\\') {
      out.push_back(c);
      continue;
    }
    out.push_back('\\');
    switch (c) {
      case '"':
      case '\\':
        out.push_back(c);
        break;
      case '\b':
        out.push_back('b');
        break;
      case '\f':
        out.push_back('f');
        break;
      case '\n':
        out.push_back('n');
        break;
      case '\r':
        out.push_back('r');
        break;
      case '\t':
        out.push_back('t');
        break;
      default:  // other controls: \u00xx in lower-case hex
        out += "u00";
        out.push_back(hex[b >> 4]);
        out.push_back(hex[b & 0x0F]);
    }
  }
}

}  // namespace idem::fp
