#include "core/server/problems.h"

#include "core/http/problemresponse.h"

namespace idem::server {

http::Response problem(http::Problem p, std::string_view detail, std::string_view docsUrl, std::string_view instance,
                       int status) {
  return http::problemResponse(p, docsUrl, detail, status, {{"instance", instance}});
}

http::Response internalError(std::string_view requestId, std::string_view whatHappened, std::string_view docsUrl) {
  return problem(http::Problem::Internal,
                 std::string(whatHappened) + " Quote request id " + std::string(requestId) +
                     " when you report it; if the request carried an Idempotency-Key, retry with the same key.",
                 docsUrl, requestId);
}

http::Response problemForStatus(int status, std::string_view method, std::string_view path, std::string_view docsUrl) {
  using http::Problem;
  const std::string route = std::string(method) + " " + std::string(path);
  switch (status) {
    case 404:
      return problem(Problem::NotFound, "There is no route " + route + ".", docsUrl);
    case 405:
      return problem(Problem::MethodNotAllowed, route + " is not supported.", docsUrl);
    case 413:
      return problem(Problem::PayloadTooLarge,
                     "The request body exceeds the endpoint's limit; nothing was executed or stored.", docsUrl);
    case 414:
      return problem(Problem::UriTooLong, "The request line exceeds 8 KiB; nothing was executed or stored.", docsUrl);
    case 400:
      return problem(Problem::BadRequest,
                     "The request line or headers could not be parsed, or its framing is ambiguous (two different "
                     "Content-Lengths, Content-Length with Transfer-Encoding); nothing was executed or stored.",
                     docsUrl);
    case 415:
      return problem(Problem::EncodingUnsupported,
                     "The endpoint takes request bodies without Content-Encoding (a compressed body could inflate "
                     "past the body limit); send it uncompressed. Nothing was executed or stored.",
                     docsUrl);
    case 417:
      return problem(Problem::ExpectationFailed,
                     "Only \"Expect: 100-continue\" is supported; nothing was executed or stored.", docsUrl);
    case 431:
      return problem(Problem::HeadersTooLarge,
                     "The request line and headers exceed the endpoint's limit (bytes or number of fields); "
                     "nothing was executed or stored.",
                     docsUrl);
    case 501:
      return problem(Problem::TransferCodingUnsupported,
                     "The only transfer coding accepted is \"chunked\"; nothing was executed or stored.", docsUrl);
    case 503:
      return problem(Problem::Overloaded,
                     "The endpoint holds its maximum number of open connections; retry shortly. Nothing was "
                     "executed or stored.",
                     docsUrl);
    default:
      break;
  }
  if (status >= 500)
    return problem(Problem::Internal,
                   "The endpoint failed while handling the request. If it carried an Idempotency-Key, retry with "
                   "the same key: the answer is either the stored outcome or a fresh execution, never both.",
                   docsUrl, {}, status);
  return problem(Problem::BadRequest, "The request was rejected (" + route + ").", docsUrl, {}, status);
}

}  // namespace idem::server
