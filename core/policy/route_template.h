#pragma once
// Route templates (docs/policy.md, "Routes"): a policy route's path may name parameters, so one
// route covers every id an API puts in its paths.
//  - "{name}" is a whole segment and matches any one segment: "POST /v1/orders/{id}/capture";
//  - "{name*}" is the last segment and matches one or more: "PUT /v1/files/{path*}".
// Names are letters, digits and '_' (not starting with a digit), unique in a route. Literal
// segments are kept in the canonical form requests are matched in (core/policy/route.h).
// When several routes match a request the most specific wins, segment by segment from the left:
// a literal beats a parameter, a parameter beats a wildcard. Two routes that match the same
// requests equally (they differ only in parameter names) are refused at load.
#include <optional>
#include <string>
#include <string_view>

namespace idem::policy {

/// The canonical spelling of a policy route's path (template or not), or nullopt with `problem`
/// saying in words what is wrong (unbalanced braces, an empty or bad name, a parameter inside a
/// segment, a wildcard not last, a bare '*', a malformed %-escape). A path without parameters
/// gets exactly canonicalPath's form.
[[nodiscard]] std::optional<std::string> canonicalPathTemplate(std::string_view path, std::string& problem);

/// Whether a canonical policy route ("POST /v1/orders/{id}") has parameters.
[[nodiscard]] bool isRouteTemplate(std::string_view route);

/// How specifically the canonical policy route `route` matches the canonical request route
/// `request` ("POST /v1/orders/123"): one character per request segment the route consumes,
/// '0' literal, '1' parameter, '2' wildcard; the smaller string is the more specific match.
/// nullopt when it does not match.
[[nodiscard]] std::optional<std::string> templateRank(std::string_view route, std::string_view request);

/// The requests a canonical route matches, independent of its parameter names: "{id}" becomes
/// "{}", "{path*}" becomes "{*}". Two routes with one shape are the same route.
[[nodiscard]] std::string routeShape(std::string_view route);

}  // namespace idem::policy
