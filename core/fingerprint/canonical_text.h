#pragma once
// Streaming RFC 8785 (JCS) canonicalisation of JSON text: Mode::Json's hot path, which skips
// building an nlohmann DOM (a std::map per object, an allocation per value).
#include <optional>
#include <string>
#include <string_view>

namespace idem::fp {

/// The RFC 8785 canonical form of `text`, byte for byte what canonicalJson(json::parse(text))
/// gives, or nullopt where this fast path is not sure. nullopt covers all invalid JSON (the DOM
/// path then words the error) and valid input left to the DOM path: member names with escapes
/// or non-ASCII bytes, duplicate member names, \u escapes of surrogates, numbers beyond the
/// range of a double. Throws nothing but std::bad_alloc.
[[nodiscard]] std::optional<std::string> canonicalJsonText(std::string_view text);

// Its scalars (canonical_scalars.cpp). Each starts at in[pos] (a '"', or a '-' or digit),
// appends the canonical form to `out` and moves pos past the value, or returns false for
// anything invalid or left to the DOM path. `scratch` is a reusable buffer.
[[nodiscard]] bool appendCanonicalString(std::string_view in, std::size_t& pos, std::string& out, std::string& scratch);
[[nodiscard]] bool appendCanonicalNumber(std::string_view in, std::size_t& pos, std::string& out);

}  // namespace idem::fp
