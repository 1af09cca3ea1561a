#pragma once
// What a connection decides from the request line, the framing and the socket alone, before any
// handler sees the request: the refusals' statuses and labels, and which ends are quiet.
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/fields.hpp>
#include <string>
#include <string_view>

#include "core/http/problemcatalogue.h"
#include "core/http/response.h"

namespace idem::server {

/// The `idem_requests_total{outcome}` label of a request the transport refused with `status`.
std::string outcomeForStatus(int status);

/// A field value with its blanks trimmed, in lower case: how tokens such as `100-continue` compare.
std::string lowerTrimmed(std::string_view v);

/// Does any `name` field hold something other than `allowed` (case and blanks aside)?
bool anyValueBut(const boost::beast::http::fields& fields, boost::beast::http::field name, std::string_view allowed);

/// A status for a request the parser refused: the header block over its byte limit is 431,
/// a body over --max-body 413, everything else (conflicting or malformed framing) 400.
int statusForParseError(const boost::beast::error_code& ec);

/// RFC 9110 §9.1: method names are case-sensitive. A name that matches a standard method only
/// when case is ignored ("post") would route as an unknown method past a tier that names POST,
/// and an upstream might still run it as POST; refused before anything sees it.
bool methodInWrongCase(std::string_view method);

/// A refusal about load, not about the request: answered with Retry-After.
http::Response retryLater(http::Problem p, std::string_view detail, const std::string& docs);

/// The client or the server ended the connection in an ordinary way: nothing to log.
bool quietEnd(const boost::beast::error_code& ec);

}  // namespace idem::server
