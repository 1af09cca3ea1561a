#pragma once
// The endpoint's own problem+json answers (RFC 9457) for what happens around enforcement:
// unknown route, wrong media type, invalid body, fault injection. Each links an anchor of the
// published policy page, like the enforcer's problems do.
#include <string>
#include <string_view>

#include "core/enforce/problem.h"

namespace idem::endpoint {

/// A problem response: Content-Type application/problem+json, body {type, title, status, detail}.
[[nodiscard]] enforce::Response problem(int status, std::string_view slug, std::string_view title,
                                        std::string_view detail, std::string_view docsUrl);

/// The generic answer for a status the HTTP layer produced itself (parse errors, limits, 404...).
[[nodiscard]] enforce::Response problemForStatus(int status, std::string_view method, std::string_view path,
                                                 std::string_view docsUrl);

}  // namespace idem::endpoint
