#include "core/proxy/answerrules.h"

#include "core/proxy/createdresource.h"
#include "core/proxy/forwarding.h"

namespace idem::proxy {

enforce::Response fromUpstream(UpstreamAnswer& a, bool head) {
  enforce::Response r{a.status, towardsClient(a.headers), std::move(a.body)};
  if (head)
    if (auto length = http::findHeader(a.headers, "Content-Length")) r.headers.emplace_back("Content-Length", *length);
  return r;
}

// 401/407: not authenticated (yet); 408: the upstream did not get the whole request; 429: rate
// limited; 503 with Retry-After: shedding load. Storing any of them would replay a stale refusal
// for the key's whole TTL. 403 is not among them: it is usually a decision on the resource's
// state, as final as a 422, and replaying it is what a retry would get anyway.
bool refusedBeforeWork(const UpstreamAnswer& a) {
  switch (a.status) {
    case 401:
    case 407:
    case 408:
    case 429:
      return true;
    case 503:
      return http::findHeader(a.headers, "Retry-After").has_value();
    default:
      return false;
  }
}

void distrustUnverifiable(Sent& sent) {
  if (sent.failure != Failure::None || !sent.answer.closeDelimited) return;
  sent.failure = Failure::Broken;
  sent.detail = "the upstream's " + std::to_string(sent.answer.status) +
                " answer had no Content-Length and was not chunked: it ended when the connection closed, so it "
                "cannot be known to be whole";
}

enforce::CompleteOptions naming(const UpstreamAnswer& a) {
  enforce::CompleteOptions options;
  options.resourceRef = createdResource(a.status, a.headers, a.body);
  return options;
}

bool idempotentMethod(const std::string& m) {
  return m == "GET" || m == "HEAD" || m == "OPTIONS" || m == "TRACE" || m == "PUT" || m == "DELETE";
}

}  // namespace idem::proxy
