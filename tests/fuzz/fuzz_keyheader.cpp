// The Idempotency-Key header parser (core/http/keyheader). Any field value either gives a key
// that obeys the documented alphabet and round-trips through Idem's own sf-string form, or an
// error with a rule to show the client.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/http/keyheader.h"
#include "tests/fuzz/fuzz_check.h"

using idem::fuzz::check;
namespace http = idem::http;

namespace {

bool validKeyCharacter(char c) {
  const auto b = static_cast<unsigned char>(c);
  return b > 0x20 && b < 0x7F && c != '"' && c != '\\';
}

void checkKey(const std::string& key) {
  check(!key.empty() && key.size() <= http::kMaxKeyLength, "a parsed key is 1..255 characters", key);
  for (const char c : key) check(validKeyCharacter(c), "a parsed key is visible ASCII without space, quote, backslash", key);
  // Strict out, lenient in: Idem's own form of the key, and the bare key, read back as the key.
  const auto written = http::serializeSfString(key);
  check(written.has_value(), "every valid key has an sf-string form", key);
  const auto reread = http::parseIdempotencyKey(*written);
  check(reread.key == key, "the sf-string Idem writes parses back to the same key", *written);
  check(http::parseIdempotencyKey(key).key == key, "the bare key parses to itself", key);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  const http::KeyParse parsed = http::parseIdempotencyKey(input);
  if (parsed.key) {
    check(parsed.error == http::KeyError::None, "a key comes without an error");
    checkKey(*parsed.key);
  } else {
    check(parsed.error != http::KeyError::None, "no key means an error");
    check(!parsed.rule.empty(), "an error names the rule broken");
  }

  // The strict RFC 9651 reader: whatever string it reads is one the writer can write back.
  if (const auto sf = http::parseSfString(input)) {
    const auto written = http::serializeSfString(*sf);
    check(written.has_value(), "an sf-string's value has an sf-string form", *sf);
    check(http::parseSfString(*written) == sf, "serialise then parse gives the same string", *written);
  }
  // The writer's output is always read back by the strict reader.
  if (const auto written = http::serializeSfString(input))
    check(http::parseSfString(*written) == std::string(input), "parse(serialise(s)) == s", *written);
  return 0;
}
