#pragma once
// The one place a problem+json answer (RFC 9457) is built from a catalogue entry
// (problemcatalogue.h); the transport's, the gate's and the enforcer's problems all come here.
#include <string_view>
#include <utility>
#include <vector>

#include "core/http/problemcatalogue.h"
#include "core/http/response.h"

namespace idem::http {

/// Content-Type application/problem+json, body {type: docsUrl#slug, title, status, detail} plus
/// the `extra` string members whose value is not empty (instance, idempotency_key). `status`
/// only for an entry whose status varies (0 in the catalogue). Never throws for client bytes.
[[nodiscard]] Response problemResponse(Problem p, std::string_view docsUrl, std::string_view detail, int status = 0,
                                       const std::vector<std::pair<std::string_view, std::string_view>>& extra = {});

}  // namespace idem::http
