// Both RFC 8785 canonicalisers of core/fingerprint: the streaming one (canonical_text.cpp, the
// hot path) and the DOM one (canonical_json.cpp). Where the streaming one answers, the DOM one
// must accept the same text and write the same bytes (or two equal requests would get two
// fingerprints); canonical text canonicalises to itself under both.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/fingerprint/canonical_text.h"
#include "core/fingerprint/fingerprint.h"
#include "tests/fuzz/fuzz_check.h"

using idem::fuzz::check;
namespace fp = idem::fp;
using nlohmann::json;

namespace {

/// The DOM path as fingerprints take it: nullopt where the body is refused as invalid JSON.
std::optional<std::string> domCanonical(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) return std::nullopt;  // fingerprint.cpp refuses NUL
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) return std::nullopt;
  try {
    return fp::canonicalJson(doc);
  } catch (const fp::InvalidJson&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::optional<std::string> fast = fp::canonicalJsonText(text);
  const std::optional<std::string> dom = domCanonical(text);

  if (fast) {
    check(dom.has_value(), "text the streaming canonicaliser accepts is valid JSON to the DOM path", *fast);
    check(*fast == *dom, "both canonicalisers write the same bytes", "streaming: " + *fast + "\n  dom:       " + *dom);
  }
  if (!dom) {
    // Invalid JSON is refused on the request path with a 400, never a 500.
    try {
      (void)fp::compute(fp::Spec{fp::Mode::Json, {}, {}}, text, {});
      idem::fuzz::fail("the DOM path refuses the text but a fingerprint was computed");
    } catch (const fp::InvalidJson&) {
    }
    return 0;
  }

  // Canonical text is a fixed point of both.
  const std::string& canonical = *dom;
  check(domCanonical(canonical) == canonical, "DOM canonicalisation twice changes nothing", canonical);
  if (const auto again = fp::canonicalJsonText(canonical))
    check(*again == canonical, "streaming canonicalisation twice changes nothing", *again);
  // The fingerprint is the SHA-256 of the canonical form, whichever path computed it.
  check(fp::compute(fp::Spec{fp::Mode::Json, {}, {}}, text, {}) == fp::sha256(canonical),
        "the JSON fingerprint is the SHA-256 of the canonical form", canonical);
  return 0;
}
