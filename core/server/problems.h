#pragma once
// Problem+json answers (RFC 9457) built outside the enforcer: the transport's refusals (limits,
// framing), and what handlers answer around enforcement (unknown route, wrong media type,
// invalid body, internal errors). Each links an anchor of the published policy page, like the
// enforcer's problems do. A client never sees
// internals (store messages, exception text): it gets the request id to quote, and the operator
// finds the cause under that id in the log.
#include <string>
#include <string_view>

#include "core/http/problemcatalogue.h"
#include "core/http/response.h"

namespace idem::server {

/// A problem response: Content-Type application/problem+json, body {type (docsUrl#slug), title,
/// status, detail} from the catalogue's entry (core/http/problemcatalogue.h), and `instance` (the
/// request id) when given. `status` only for an entry whose status varies (0 in the catalogue).
/// Never throws for client bytes in `detail`.
[[nodiscard]] http::Response problem(http::Problem p, std::string_view detail, std::string_view docsUrl,
                                     std::string_view instance = {}, int status = 0);

/// The generic answer for a status the transport produced itself (parse errors, limits), or a
/// handler's plain 404/405.
[[nodiscard]] http::Response problemForStatus(int status, std::string_view method, std::string_view path,
                                              std::string_view docsUrl);

/// 500 for a failure inside the server: what failed stays in the log (logInternalError), the
/// client gets the request id. `whatHappened` says what the client may assume ("nothing was
/// executed"); it must not quote internals.
[[nodiscard]] http::Response internalError(std::string_view requestId, std::string_view whatHappened,
                                           std::string_view docsUrl);

}  // namespace idem::server
