#include "core/server/problems.h"

#include <nlohmann/json.hpp>

#include "core/text/json_text.h"

namespace idem::server {

http::Response problem(int status, std::string_view slug, std::string_view title, std::string_view detail,
                       std::string_view docsUrl, std::string_view instance) {
  nlohmann::json body{{"type", std::string(docsUrl) + "#" + std::string(slug)},
                      {"title", title},
                      {"status", status},
                      {"detail", detail}};
  if (!instance.empty()) body["instance"] = instance;
  http::Response r;
  r.status = status;
  r.headers.emplace_back("Content-Type", "application/problem+json");
  r.body = text::dumpJson(body);  // the detail may quote a path or id the client sent
  return r;
}

http::Response internalError(std::string_view requestId, std::string_view whatHappened, std::string_view docsUrl) {
  return problem(500, "internal", "Internal error",
                 std::string(whatHappened) + " Quote request id " + std::string(requestId) +
                     " when you report it; if the request carried an Idempotency-Key, retry with the same key.",
                 docsUrl, requestId);
}

http::Response problemForStatus(int status, std::string_view method, std::string_view path, std::string_view docsUrl) {
  const std::string route = std::string(method) + " " + std::string(path);
  switch (status) {
    case 404:
      return problem(404, "not-found", "No such route", "There is no route " + route + ".", docsUrl);
    case 405:
      return problem(405, "method-not-allowed", "Method not allowed", route + " is not supported.", docsUrl);
    case 413:
      return problem(413, "payload-too-large", "Request body too large",
                     "The request body exceeds the endpoint's limit; nothing was executed or stored.", docsUrl);
    case 414:
      return problem(414, "uri-too-long", "Request target too long",
                     "The request line exceeds 8 KiB; nothing was executed or stored.", docsUrl);
    case 400:
      return problem(400, "bad-request", "Malformed HTTP request",
                     "The request line or headers could not be parsed, or its framing is ambiguous (two different "
                     "Content-Lengths, Content-Length with Transfer-Encoding); nothing was executed or stored.",
                     docsUrl);
    case 415:
      return problem(415, "encoding-unsupported", "Content-Encoding not accepted",
                     "The endpoint takes request bodies without Content-Encoding (a compressed body could inflate "
                     "past the body limit); send it uncompressed. Nothing was executed or stored.",
                     docsUrl);
    case 417:
      return problem(417, "expectation-failed", "Expectation not supported",
                     "Only \"Expect: 100-continue\" is supported; nothing was executed or stored.", docsUrl);
    case 431:
      return problem(431, "headers-too-large", "Request header fields too large",
                     "The request line and headers exceed the endpoint's limit (bytes or number of fields); "
                     "nothing was executed or stored.",
                     docsUrl);
    case 501:
      return problem(501, "transfer-coding-unsupported", "Transfer-Encoding not supported",
                     "The only transfer coding accepted is \"chunked\"; nothing was executed or stored.", docsUrl);
    case 503:
      return problem(503, "overloaded", "Too many connections",
                     "The endpoint holds its maximum number of open connections; retry shortly. Nothing was "
                     "executed or stored.",
                     docsUrl);
    default:
      break;
  }
  if (status >= 500)
    return problem(status, "internal", "Internal error",
                   "The endpoint failed while handling the request. If it carried an Idempotency-Key, retry with "
                   "the same key: the answer is either the stored outcome or a fresh execution, never both.",
                   docsUrl);
  return problem(status, "bad-request", "Request rejected", "The request was rejected (" + route + ").", docsUrl);
}

}  // namespace idem::server
