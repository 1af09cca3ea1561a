// Strings and numbers for the streaming canonicaliser (canonical_text.cpp): each is checked
// against the JSON grammar and written in its RFC 8785 form, or refused (false) when unsure.
#include <charconv>
#include <cmath>

#include "core/fingerprint/canonical_text.h"
#include "core/fingerprint/jcs.h"
#include "core/text/utf8.h"

namespace idem::fp {
namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

/// UTF-8 of a code point below U+10000 that is not a surrogate (what one \uXXXX can be here).
void appendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// The escape after a backslash at in[i], decoded onto `decoded`; i moves past it.
bool decodeEscape(std::string_view in, std::size_t& i, std::string& decoded) {
  if (i >= in.size()) return false;
  const char e = in[i++];
  if (e != 'u') {
    static constexpr std::string_view kNames = "\"\\/bfnrt";
    static constexpr std::string_view kValues = "\"\\/\b\f\n\r\t";
    const std::size_t k = kNames.find(e);
    if (k == std::string_view::npos) return false;
    decoded.push_back(kValues[k]);
    return true;
  }
  if (in.size() - i < 4) return false;
  char32_t cp = 0;
  for (int k = 0; k < 4; ++k) {
    const int h = hexValue(in[i++]);
    if (h < 0) return false;
    cp = (cp << 4) | static_cast<char32_t>(h);
  }
  if (cp >= 0xD800 && cp <= 0xDFFF) return false;  // pairs and lone halves: left to the DOM path
  appendUtf8(decoded, cp);
  return true;
}

}  // namespace

// A string without escapes is its own canonical form once it is known to be valid UTF-8
// without raw controls; one with escapes is decoded, then escaped as the DOM path does.
bool appendCanonicalString(std::string_view in, std::size_t& pos, std::string& out, std::string& scratch) {
  const std::size_t first = pos + 1;
  std::size_t i = first;
  while (i < in.size()) {
    const auto b = static_cast<unsigned char>(in[i]);
    if (b == '"') {
      out.append(in.substr(pos, i + 1 - pos));
      pos = i + 1;
      return true;
    }
    if (b == '\\') break;
    if (b < 0x20) return false;  // raw controls are not JSON
    if (b < 0x80)
      ++i;
    else if (!text::decodeUtf8(in, i))
      return false;
  }
  scratch.assign(in.substr(first, i - first));
  while (i < in.size()) {
    const auto b = static_cast<unsigned char>(in[i]);
    if (b == '"') {
      out.push_back('"');
      appendJcsEscaped(out, scratch);
      out.push_back('"');
      pos = i + 1;
      return true;
    }
    if (b < 0x20) return false;
    const std::size_t from = i;
    if (b == '\\') {
      if (!decodeEscape(in, ++i, scratch)) return false;
    } else if (text::decodeUtf8(in, i)) {
      scratch.append(in.substr(from, i - from));
    } else {
      return false;
    }
  }
  return false;  // unterminated
}

// RFC 8259 number grammar. An integer of at most 15 digits is exact in a double and ECMAScript
// writes it as its digits; anything else goes through the double, as in the DOM path.
bool appendCanonicalNumber(std::string_view in, std::size_t& pos, std::string& out) {
  const std::size_t start = pos;
  std::size_t i = pos;
  const bool negative = in[i] == '-';
  if (negative) ++i;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < in.size() && isDigit(in[i])) ++i;
    return i - from;
  };
  if (i >= in.size() || !isDigit(in[i])) return false;
  const std::size_t intDigits = in[i] == '0' ? (++i, 1) : digits();  // no leading zeros
  bool plain = true;
  if (i < in.size() && in[i] == '.') {
    plain = false;
    ++i;
    if (digits() == 0) return false;
  }
  if (i < in.size() && (in[i] == 'e' || in[i] == 'E')) {
    plain = false;
    ++i;
    if (i < in.size() && (in[i] == '+' || in[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  pos = i;
  if (plain && intDigits <= 15) {
    if (negative && in[start + 1] != '0') out.push_back('-');  // "-0" is 0
    out.append(in.substr(start + (negative ? 1 : 0), intDigits));
    return true;
  }
  double x = 0;
  const auto [end, ec] = std::from_chars(in.data() + start, in.data() + i, x);
  // Out of range (overflow, or underflow to zero): the DOM path decides what that means.
  if (ec != std::errc{} || end != in.data() + i || !std::isfinite(x)) return false;
  appendJcsNumber(out, x);
  return true;
}

}  // namespace idem::fp
