#pragma once
// One hexadecimal digit's value, for the percent-decoding of paths (the HTTP layer and the
// policy's route matching read %XX alike).
namespace idem::text {

/// 0–15, or -1 when `c` is not a hexadecimal digit.
[[nodiscard]] constexpr int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace idem::text
