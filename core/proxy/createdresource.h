#pragma once
// The id of what a service's answer created, so support can search the console by the id the
// customer quotes (`ch_123`, `pay_456`) for a key that went through the proxy: the proxy does
// not know the service's resources, but a 2xx that creates one names it the REST way.
#include <optional>
#include <string>
#include <string_view>

#include "core/http/headers.h"

namespace idem::proxy {

/// For a 2xx answer: the last path segment of its `Location` header, else the top-level string
/// `"id"` of a JSON object body. At most 128 visible ASCII characters; nullopt otherwise (an
/// error answer, no Location and no such id, an id that is not a plain token).
[[nodiscard]] std::optional<std::string> createdResource(int status, const http::Headers& headers,
                                                         std::string_view body);

}  // namespace idem::proxy
