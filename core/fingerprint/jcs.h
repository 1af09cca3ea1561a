#pragma once
// RFC 8785 (JCS) output primitives shared by the DOM serialiser (canonical_json.cpp) and the
// streaming one (canonical_text.cpp): both must write every number and string byte for byte
// alike, so there is one formatter of each.
#include <string>
#include <string_view>

namespace idem::fp {

/// ECMAScript Number::toString(x) (ECMA-262 §6.1.6.1.20), which RFC 8785 §3.2.2.3 adopts.
/// Throws InvalidJson for NaN and the infinities, which have no JSON form.
void appendJcsNumber(std::string& out, double x);

/// The inside of a JSON.stringify string (RFC 8785 §3.2.2.2), without the quotes: only '"',
/// '\\' and controls are escaped, with the short forms where they exist; other bytes are
/// copied. The caller has checked that `s` is valid UTF-8.
void appendJcsEscaped(std::string& out, std::string_view s);

}  // namespace idem::fp
