#pragma once
// RFC 9457 problem details (application/problem+json) whose `type` links the published policy.
#include <string>
#include <string_view>

#include "core/http/headers.h"
#include "core/http/response.h"

namespace idem::enforce {

using Response = http::Response;

/// What went wrong, each with a stable anchor in the published policy page.
enum class Problem {
  KeyMissing,         // 400
  KeyMalformed,       // 400
  TenantMalformed,    // 400
  TenantMissing,      // 400
  KeyNotHonoured,     // 400: a keyed request on a route no tier covers
  BodyInvalid,        // 400
  BodyTooDeep,        // 400: nested deeper than text::kMaxJsonDepth
  PayloadMismatch,    // 422
  KeyExpired,         // 422
  RequestInProgress,  // 409
  StoreUnavailable,   // 503
  DurabilityTooWeak,  // 503: the tier requires synchronous durability and the store does not give it
  ExecutionAbandoned, // 500: the handler never answered after execution started (stored)
};

[[nodiscard]] int problemStatus(Problem p);
[[nodiscard]] std::string_view problemSlug(Problem p);

/// Builds the response: status, Content-Type: application/problem+json, body with type
/// (docsUrl#slug), title, status, detail and, when given, the key.
[[nodiscard]] Response makeProblem(Problem p, std::string_view docsUrl, std::string_view detail,
                                   std::string_view key = {});

/// RFC 9110 IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") of epoch milliseconds.
[[nodiscard]] std::string httpDate(long long epochMs);

}  // namespace idem::enforce
