#pragma once
// The stored response headers: a JSON array of [name, value] pairs in resp_headers (jsonb), so
// repeated headers and their order survive. Read on every replay, hence the fast decoder.
#include <string>
#include <string_view>

#include "core/http/headers.h"

namespace idem::store {

[[nodiscard]] std::string headersToJson(const http::Headers& headers);
/// Decodes what headersToJson wrote (as jsonb gives it back); anything else that is a JSON
/// array of string pairs too. Malformed text yields no headers rather than an exception.
[[nodiscard]] http::Headers headersFromJson(std::string_view text);

}  // namespace idem::store
