#include "core/http/keyheader.h"

#include "core/text/utf8.h"

#include <cstdio>
#include <utility>

namespace idem::http {
namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isLcAlpha(char c) { return c >= 'a' && c <= 'z'; }
bool isAlpha(char c) { return isLcAlpha(c) || (c >= 'A' && c <= 'Z'); }
bool isLcHex(char c) { return isDigit(c) || (c >= 'a' && c <= 'f'); }
int lcHexValue(char c) { return isDigit(c) ? c - '0' : c - 'a' + 10; }
// Visible ASCII or SP: the only bytes an sf-string may carry (RFC 9651 §3.3.3).
bool isSfStringChar(char c) { return c >= 0x20 && c <= 0x7E; }

bool isTchar(char c) {
  static constexpr std::string_view extra = "!#$%&'*+-.^_`|~";
  return isAlpha(c) || isDigit(c) || extra.find(c) != std::string_view::npos;
}

bool isBase64Char(char c) { return isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '='; }

/// How a byte reads in an error message: never echo control or non-ASCII bytes raw, since the
/// message ends up in a problem+json detail and in logs.
std::string describe(char c) {
  const auto b = static_cast<unsigned char>(c);
  char buf[32];
  if (b == ' ') return "a space (0x20)";
  if (b == '\t') return "a tab (0x09)";
  if (b == '"') return "a double quote";
  if (b == '\\') return "a backslash";
  if (b < 0x20 || b == 0x7F) {
    std::snprintf(buf, sizeof buf, "control character 0x%02X", b);
  } else if (b > 0x7F) {
    std::snprintf(buf, sizeof buf, "non-ASCII byte 0x%02X", b);
  } else {
    std::snprintf(buf, sizeof buf, "'%c'", c);
  }
  return buf;
}

/// RFC 9651 §4.2 parsing of a whole field value as an Item, keeping the bare item only when it
/// is a String. Parameters are validated in full (any bare-item type) and then dropped: a
/// malformed parameter makes the whole field malformed.
class StringItemParser {
 public:
  explicit StringItemParser(std::string_view input) : m_in(input) {}

  std::optional<std::string> parse() {
    skipSp();
    if (atEnd()) return failed("the value is empty");
    if (peek() != '"') return failed("the item is not a string (it does not start with a double quote)");
    std::string value;
    if (!parseString(value) || !parseParameters()) return std::nullopt;
    skipSp();
    if (!atEnd()) return failed("unexpected " + describe(peek()) + " after the string and its parameters");
    return value;
  }

  [[nodiscard]] const std::string& why() const { return m_why; }

 private:
  [[nodiscard]] bool atEnd() const { return m_pos >= m_in.size(); }
  [[nodiscard]] char peek() const { return m_in[m_pos]; }
  char take() { return m_in[m_pos++]; }
  void skipSp() {
    while (!atEnd() && peek() == ' ') ++m_pos;
  }

  bool fail(std::string why) {
    if (m_why.empty()) m_why = std::move(why);
    return false;
  }
  std::nullopt_t failed(std::string why) {
    fail(std::move(why));
    return std::nullopt;
  }

  // §4.2.5
  bool parseString(std::string& out) {
    take();  // the opening DQUOTE
    while (!atEnd()) {
      const char c = take();
      if (c == '\\') {
        if (atEnd()) return fail("the string ends inside an escape");
        const char next = take();
        if (next != '"' && next != '\\') return fail("a backslash may only escape '\"' or '\\', not " + describe(next));
        out.push_back(next);
      } else if (c == '"') {
        return true;
      } else if (!isSfStringChar(c)) {
        return fail(describe(c) + " is not allowed inside a string");
      } else {
        out.push_back(c);
      }
    }
    return fail("the string has no closing double quote");
  }

  // §4.2.3.1: any type; the value is not needed, only its validity.
  bool parseBareItem() {
    if (atEnd()) return fail("a parameter value is missing");
    const char c = peek();
    if (c == '-' || isDigit(c)) return parseNumber(true);
    if (c == '"') {
      std::string ignored;
      return parseString(ignored);
    }
    if (isAlpha(c) || c == '*') return parseToken();
    if (c == ':') return parseByteSequence();
    if (c == '?') return parseBoolean();
    if (c == '@') return parseDate();
    if (c == '%') return parseDisplayString();
    return fail(describe(c) + " cannot start a parameter value");
  }

  // §4.2.4; a Date's number must be an Integer.
  bool parseNumber(bool allowDecimal) {
    if (!atEnd() && peek() == '-') take();
    if (atEnd() || !isDigit(peek())) return fail("a number has no digits");
    std::size_t digits = 0;
    std::size_t dot = std::string_view::npos;
    while (!atEnd()) {
      const char c = peek();
      if (isDigit(c)) {
        ++digits;
      } else if (c == '.' && dot == std::string_view::npos) {
        if (!allowDecimal) return fail("a date must be an integer");
        if (digits > 12) return fail("a decimal has more than 12 integer digits");
        dot = digits;
      } else {
        break;
      }
      take();
      if (dot == std::string_view::npos && digits > 15) return fail("an integer has more than 15 digits");
      if (dot != std::string_view::npos && digits > 15) return fail("a decimal has more than 16 characters");
    }
    if (dot == digits) return fail("a decimal ends with '.'");
    if (dot != std::string_view::npos && digits - dot > 3) return fail("a decimal has more than 3 fraction digits");
    return true;
  }

  // §4.2.6
  bool parseToken() {
    take();
    while (!atEnd() && (isTchar(peek()) || peek() == ':' || peek() == '/')) take();
    return true;
  }

  // §4.2.7; padding is checked as far as base64 decoding itself would.
  bool parseByteSequence() {
    take();
    const std::size_t start = m_pos;
    while (!atEnd() && peek() != ':') {
      if (!isBase64Char(peek())) return fail(describe(peek()) + " is not allowed in a byte sequence");
      take();
    }
    if (atEnd()) return fail("a byte sequence has no closing ':'");
    std::string_view b64 = m_in.substr(start, m_pos - start);
    take();
    const std::size_t firstPad = b64.find('=');
    if (firstPad != std::string_view::npos) {
      const std::string_view pad = b64.substr(firstPad);
      if (pad.find_first_not_of('=') != std::string_view::npos || pad.size() > 2 || b64.size() % 4 != 0)
        return fail("a byte sequence has misplaced '=' padding");
      b64 = b64.substr(0, firstPad);
    }
    if (b64.size() % 4 == 1) return fail("a byte sequence is not valid base64");
    return true;
  }

  // §4.2.8
  bool parseBoolean() {
    take();
    if (atEnd() || (peek() != '0' && peek() != '1')) return fail("a boolean must be ?0 or ?1");
    take();
    return true;
  }

  // §4.2.9
  bool parseDate() {
    take();
    return parseNumber(false);
  }

  // §4.2.10
  bool parseDisplayString() {
    take();
    if (atEnd() || take() != '"') return fail("a display string must start with %\"");
    std::string bytes;
    while (!atEnd()) {
      const char c = take();
      if (!isSfStringChar(c)) return fail(describe(c) + " is not allowed inside a display string");
      if (c == '%') {
        if (m_in.size() - m_pos < 2 || !isLcHex(m_in[m_pos]) || !isLcHex(m_in[m_pos + 1]))
          return fail("a display string has a '%' not followed by two lower-case hex digits");
        bytes.push_back(static_cast<char>(lcHexValue(m_in[m_pos]) * 16 + lcHexValue(m_in[m_pos + 1])));
        m_pos += 2;
      } else if (c == '"') {
        return text::isValidUtf8(bytes) || fail("a display string does not decode to valid UTF-8");
      } else {
        bytes.push_back(c);
      }
    }
    return fail("a display string has no closing double quote");
  }

  // §4.2.3.2
  bool parseParameters() {
    while (!atEnd() && peek() == ';') {
      take();
      skipSp();
      if (!parseKey()) return false;
      if (!atEnd() && peek() == '=') {
        take();
        if (!parseBareItem()) return false;
      }
    }
    return true;
  }

  // §4.2.3.3
  bool parseKey() {
    if (atEnd() || !(isLcAlpha(peek()) || peek() == '*'))
      return fail("a parameter name must start with a lower-case letter or '*'");
    while (!atEnd()) {
      const char c = peek();
      if (!(isLcAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*')) break;
      take();
    }
    return true;
  }

  std::string_view m_in;
  std::size_t m_pos = 0;
  std::string m_why;
};

std::string_view trimOws(std::string_view s) {
  const auto isOws = [](char c) { return c == ' ' || c == '\t'; };
  while (!s.empty() && isOws(s.front())) s.remove_prefix(1);
  while (!s.empty() && isOws(s.back())) s.remove_suffix(1);
  return s;
}

KeyParse reject(KeyError error, std::string rule) {
  KeyParse result;
  result.error = error;
  result.rule = std::move(rule);
  return result;
}

}  // namespace

KeyParse parseIdempotencyKey(std::string_view fieldValue) {
  const std::string_view value = trimOws(fieldValue);
  std::string key;
  if (!value.empty() && value.front() == '"') {
    StringItemParser parser(value);
    auto parsed = parser.parse();
    if (!parsed)
      return reject(KeyError::BadSfString, "a key that starts with a double quote must be a valid RFC 9651 string (" +
                                               parser.why() + "); send the key bare (abc) or quoted (\"abc\")");
    key = std::move(*parsed);
  } else {
    key = std::string(value);
  }

  if (key.empty()) return reject(KeyError::Empty, "the key must not be empty; send 1 to 255 characters");
  // Length before characters: an oversized value is reported as too long whatever it holds.
  if (key.size() > kMaxKeyLength)
    return reject(KeyError::TooLong,
                  "the key must be at most 255 characters long; this one has " + std::to_string(key.size()));
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (c < 0x21 || c > 0x7E || c == '"' || c == '\\')
      return reject(KeyError::BadCharacter,
                    "the key may only contain visible ASCII characters other than '\"' and '\\'; found " + describe(c) +
                        " at position " + std::to_string(i + 1));
  }
  KeyParse result;
  result.key = std::move(key);
  return result;
}

std::optional<std::string> parseSfString(std::string_view fieldValue) { return StringItemParser(fieldValue).parse(); }

std::optional<std::string> serializeSfString(std::string_view value) {
  std::string out;
  out.reserve(value.size() + 2);
  out.push_back('"');
  for (const char c : value) {
    if (!isSfStringChar(c)) return std::nullopt;
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace idem::http
