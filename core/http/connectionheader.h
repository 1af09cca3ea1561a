#pragma once
// The Connection header (RFC 9110 §7.6.1): the options it names are hop-by-hop and must not
// cross an intermediary. The proxy drops them towards its upstream; the gate refuses a request
// whose Connection names a header it decides on.
#include <optional>
#include <string>
#include <vector>

#include "core/http/headers.h"

namespace idem::http {

/// The names every Connection header lists (comma-separated tokens), lower-cased.
[[nodiscard]] std::vector<std::string> connectionOptions(const Headers& headers);

/// The first of `fields` that the request's Connection header names (case-insensitive).
[[nodiscard]] std::optional<std::string> namedInConnection(const Headers& headers, const std::vector<std::string>& fields);

}  // namespace idem::http
