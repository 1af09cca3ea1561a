#pragma once
// Which headers cross the proxy, each way. Hop-by-hop headers (RFC 9110 §7.6.1: Connection and
// every header it names, Keep-Alive, TE, Transfer-Encoding, Upgrade, Proxy-*) describe one
// connection and never cross; the framing (Content-Length, Host) is rewritten for the next hop.
// Towards the upstream the proxy says who asked (X-Forwarded-For/-Proto/-Host, Forwarded,
// RFC 7239) and under which request id. What a client says about earlier hops is its own word,
// not the proxy's: it crosses only from a hop the operator trusts (a gateway), else the proxy
// replaces it with what it saw itself.
#include <optional>
#include <string>
#include <vector>

#include "core/http/headers.h"

namespace idem::proxy {

/// The end-to-end headers of a message, without its framing (Content-Length, Host, Expect).
[[nodiscard]] http::Headers endToEnd(const http::Headers& headers);

struct ForwardedFor {
  std::string remote;     // the peer's address ("127.0.0.1", "::1")
  std::string requestId;  // the proxy's id for the request, sent as Request-Id
  /// The client's key header when the proxy enforces the request (it then also asks for the
  /// identity body); nullopt: not enforced, headers as received.
  std::optional<std::string> key;
  /// The peer is a hop the operator trusts (a gateway in front of the proxy): its forwarding
  /// headers are kept and the proxy's own element appended. false: they are dropped.
  bool trustedHop = false;
};

/// The headers to send upstream for a client's request.
[[nodiscard]] http::Headers towardsUpstream(const http::Headers& fromClient, const ForwardedFor& who);

/// The headers to send the client for an upstream's answer (the HTTP layer adds the framing).
[[nodiscard]] inline http::Headers towardsClient(const http::Headers& fromUpstream) { return endToEnd(fromUpstream); }

}  // namespace idem::proxy
