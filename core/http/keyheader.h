#pragma once
// The Idempotency-Key header: lenient in (an RFC 9651 sf-string or a bare value name the same
// key), strict out (Idem always writes an sf-string).
#include <optional>
#include <string>
#include <string_view>

namespace idem::http {

enum class KeyError {
  None,
  Empty,         // "" or "\"\"" or only whitespace
  TooLong,       // more than 255 characters after unquoting
  BadCharacter,  // control, space, quote, backslash or non-ASCII in the key
  BadSfString,   // starts with a quote but is not a valid RFC 9651 sf-string
};

struct KeyParse {
  std::optional<std::string> key;  // set when valid
  KeyError error = KeyError::None;
  std::string rule;  // for errors: the rule broken, in words, for the problem+json detail
};

inline constexpr std::size_t kMaxKeyLength = 255;

/// Parses one Idempotency-Key field value (surrounding OWS trimmed). Accepts `"abc"` and `abc`
/// as the same key; the key itself must be 1..255 visible ASCII characters without space,
/// double quote or backslash.
[[nodiscard]] KeyParse parseIdempotencyKey(std::string_view fieldValue);

/// Strict RFC 9651 parse of an Item whose bare item is a String (parameters are parsed and
/// ignored). nullopt when the input is not exactly that.
[[nodiscard]] std::optional<std::string> parseSfString(std::string_view fieldValue);

/// RFC 9651 §4.1.6 serialisation of a String; nullopt when the value has characters an
/// sf-string cannot carry (controls, non-ASCII).
[[nodiscard]] std::optional<std::string> serializeSfString(std::string_view value);

}  // namespace idem::http
