#pragma once
// What an upstream's answer means for a key, decided once for every path that stores one (the
// answer in time, a late answer): which answers pass through unstored, which cannot be stored as
// their status, and how an answer turns into the response the key keeps.
#include <string>

#include "core/enforce/enforcer.h"
#include "core/proxy/upstream.h"

namespace idem::proxy {

/// The response for the client (and the key): end-to-end headers only; on a HEAD answer the
/// upstream's Content-Length stays (RFC 9110 §9.3.2), since the HTTP layer has no body to count.
/// Takes the answer's body: read anything else from it (naming) first.
enforce::Response fromUpstream(UpstreamAnswer& answer, bool head);

/// Refused before any of its work, in a way a retry may change: not stored (the key is released
/// and the answer passed through). See docs/proxy.md, "Answers that are not stored".
bool refusedBeforeWork(const UpstreamAnswer& answer);

/// A close-delimited answer cannot be known whole (a FIN mid-body looks like its end): for an
/// enforced request it becomes Broken, so the key stores "outcome unknown", never that status.
void distrustUnverifiable(Sent& sent);

/// What completing the key records besides the answer: the id of what the service created.
enforce::CompleteOptions naming(const UpstreamAnswer& answer);

/// RFC 9110 §9.2.2: a request with one of these methods may be sent again when a connection
/// fails, so a pooled connection the upstream had closed is retried for them.
bool idempotentMethod(const std::string& method);

}  // namespace idem::proxy
