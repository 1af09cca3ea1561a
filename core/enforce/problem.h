#pragma once
// RFC 9457 problem details (application/problem+json) whose `type` links the published policy.
#include <string>
#include <string_view>

#include "core/http/headers.h"
#include "core/http/problemcatalogue.h"
#include "core/http/response.h"

namespace idem::enforce {

using Response = http::Response;

/// What went wrong: an entry of the one problem catalogue (core/http/problemcatalogue.h), each
/// with a stable anchor in the published policy page.
using Problem = http::Problem;

[[nodiscard]] int problemStatus(Problem p);
[[nodiscard]] std::string_view problemSlug(Problem p);

/// Builds the response: status, Content-Type: application/problem+json, body with type
/// (docsUrl#slug), title, status, detail and, when given, the key.
[[nodiscard]] Response makeProblem(Problem p, std::string_view docsUrl, std::string_view detail,
                                   std::string_view key = {});

/// RFC 9110 IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") of epoch milliseconds.
[[nodiscard]] std::string httpDate(long long epochMs);

}  // namespace idem::enforce
