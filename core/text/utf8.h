#pragma once
// Strict UTF-8 decoding shared by the key header (display strings) and RFC 8785 JSON.
#include <cstddef>
#include <optional>
#include <string_view>

namespace idem::text {

/// Decodes the code point starting at s[i] and advances i past it. nullopt (i unchanged) for
/// ill-formed UTF-8: a bad lead byte, a truncated sequence, an overlong form, a surrogate, or a
/// code point above U+10FFFF.
[[nodiscard]] inline std::optional<char32_t> decodeUtf8(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  std::size_t len = 0;
  char32_t cp = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1Fu;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0Fu;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07u;
  } else {
    return std::nullopt;
  }
  if (i + len > s.size()) return std::nullopt;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  static constexpr char32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
  i += len;
  return cp;
}

/// True when the whole string is well-formed UTF-8.
[[nodiscard]] inline bool isValidUtf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();)
    if (!decodeUtf8(s, i)) return false;
  return true;
}

}  // namespace idem::text
