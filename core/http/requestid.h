#pragma once
// Request ids: "req_" and 20 hex digits (80 random bits), made when a request brings none.
// One generator for the enforcer and the HTTP transport, so an id looks the same in the trace,
// the access log and a problem response.
#include <string>

namespace idem::http {

[[nodiscard]] std::string newRequestId();

}  // namespace idem::http
