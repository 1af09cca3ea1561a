#include "core/server/connectionrules.h"

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <cctype>

#include "core/http/headers.h"
#include "core/server/problems.h"

namespace idem::server {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

}  // namespace

std::string lowerTrimmed(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  std::string out(v);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string outcomeForStatus(int status) {
  switch (status) {
    case 400:
      return "bad_request";
    case 404:
      return "not_found";
    case 413:
      return "payload_too_large";
    case 415:
      return "unsupported_encoding";
    case 417:
      return "expectation_failed";
    case 431:
      return "headers_too_large";
    default:
      return status >= 500 ? "error" : "rejected";
  }
}

bool anyValueBut(const bhttp::fields& fields, bhttp::field name, std::string_view allowed) {
  for (auto [at, end] = fields.equal_range(name); at != end; ++at)
    if (lowerTrimmed(at->value()) != allowed) return true;
  return false;
}

int statusForParseError(const beast::error_code& ec) {
  if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) return 431;
  if (ec == bhttp::error::body_limit) return 413;
  return 400;
}

bool methodInWrongCase(std::string_view method) {
  static constexpr std::string_view kStandard[] = {"GET",  "HEAD",    "POST",  "PUT",  "DELETE",
                                                   "CONNECT", "OPTIONS", "TRACE", "PATCH"};
  for (const auto m : kStandard)
    if (http::equalsIgnoreCase(method, m)) return method != m;
  return false;
}

http::Response retryLater(http::Problem p, std::string_view detail, const std::string& docs) {
  auto r = problem(p, detail, docs);
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

bool quietEnd(const beast::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == boost::asio::error::eof || ec == beast::error::timeout ||
         ec == boost::asio::error::operation_aborted || ec == boost::asio::error::connection_reset ||
         ec == boost::asio::error::bad_descriptor;
}

}  // namespace idem::server
