#pragma once
// Route matching (docs/design.md §2): a request's path is compared with the policy's routes after
// normalisation, so every spelling that a framework or proxy in front of the handler may send
// to the same handler meets the same tier and the same key scope. See docs/behaviour.md, "Rules that keep
// one execution".
#include <optional>
#include <string>
#include <string_view>

namespace idem::policy {

/// The canonical form of a request path, or nullopt when it is not a usable origin-form path
/// (no leading '/', a bad or control-character escape, raw controls or spaces).
///  - the query string and fragment are dropped; so is each segment's ";parameters" part
///    (servlet containers route without it);
///  - %XX of an unreserved character (letters, digits, - . _ ~) is decoded; any other escape
///    stays one, with upper-case hex: an encoded '/' (%2F) is never a separator;
///  - raw bytes above 0x7F are percent-encoded;
///  - ASCII letters are folded to lower case (Express and ASP.NET route case-insensitively);
///  - empty segments (duplicate and trailing slashes) and "." are dropped, ".." removes the
///    segment before it (RFC 3986 §5.2.4; above the root it is dropped).
/// "/v1//Payments/" and "/v1/./%70ayments" are both "/v1/payments"; the root is "/".
[[nodiscard]] std::optional<std::string> canonicalPath(std::string_view path);

/// "METHOD /canonical/path" for a request; nullopt when the path is not usable.
[[nodiscard]] std::optional<std::string> canonicalRoute(std::string_view method, std::string_view path);

/// Safe methods (RFC 9110 §9.2.1) execute nothing, so a key on them needs no enforcement.
[[nodiscard]] bool isSafeMethod(std::string_view method);

}  // namespace idem::policy
