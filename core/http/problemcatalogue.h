#pragma once
// Every problem a front answers (RFC 9457 problem+json), in one place: the transport's refusals
// (core/server), the enforcer's decisions (core/enforce), the gate's (core/gate), serve's demo
// API and fault rig, the proxy's upstream failures. A problem's `type` is `<docs_url>#<slug>`,
// and the published policy page (core/policy, `/idempotency`) has an element with that id for
// every entry, so every type a client receives resolves (tests/gate checks each anchor).
//
// Adding a problem: one line here. Its meaning is what the published page says about it.
#include <array>
#include <string_view>

namespace idem::http {

// X(enumerator, slug, status, title, meaning). Status 0: the status varies (the meaning says how).
#define IDEM_PROBLEMS(X)                                                                                              \
  /* the key and the enforcer's decisions */                                                                         \
  X(KeyMissing, "key-missing", 400, "Idempotency-Key is missing",                                                   \
    "The route requires an Idempotency-Key header. Nothing was processed; add a key and send the request.")          \
  X(KeyMalformed, "key-malformed", 400, "Idempotency-Key is malformed",                                             \
    "The key is empty, longer than 255 characters, repeated, or holds spaces, quotes, backslashes, control or "     \
    "non-ASCII characters. Nothing was processed.")                                                                  \
  X(KeyNotHonoured, "key-not-honoured", 400, "Idempotency-Key is not honoured on this route",                       \
    "The request carries a key on a route the policy does not cover, so the key's promise cannot be kept. Nothing " \
    "was processed; send it to a listed route, or without the key.")                                                 \
  X(TenantMissing, "tenant-missing", 400, "Tenant is missing",                                                      \
    "The route needs the tenant header the gateway sets. Nothing was processed.")                                   \
  X(TenantMalformed, "tenant-malformed", 400, "Tenant is malformed",                                                \
    "The tenant header is repeated, or not 1 to 128 visible ASCII characters. Nothing was processed.")              \
  X(TenantUntrustedPeer, "tenant-untrusted-peer", 403, "Tenant header from an untrusted peer",                      \
    "The tenant header is accepted only from the gateway; this client is not one. Nothing was processed.")          \
  X(HeaderInConnection, "header-in-connection", 400, "Header named in Connection",                                  \
    "The Connection header names the key or the tenant header, which would then be dropped at the next hop. Send " \
    "it as an ordinary header. Nothing was processed.")                                                              \
  X(BodyInvalid, "body-invalid", 400, "Request body is invalid",                                                    \
    "The body is not JSON (or not UTF-8), or a field is missing or of the wrong type; the detail says where. "      \
    "Nothing was processed; fix the body and retry with the same key.")                                             \
  X(BodyTooDeep, "body-too-deep", 400, "Request body is nested too deeply",                                         \
    "The JSON body nests arrays or objects more than 64 levels. Nothing was processed.")                            \
  X(PayloadMismatch, "payload-mismatch", 422, "Idempotency-Key reused with a different payload",                    \
    "The key was first used for a different request. Nothing was processed. Check the original request's outcome; " \
    "for a different request use a new key.")                                                                        \
  X(KeyExpired, "key-expired", 422, "Idempotency-Key expired",                                                      \
    "The key is past the time it is honoured for, in a tier that refuses expired keys. Check whether the original " \
    "succeeded, then use a new key.")                                                                                \
  X(RequestInProgress, "request-in-progress", 409, "Server processing previous request",                            \
    "The first request with this key is still running. Wait Retry-After seconds and retry with the same key.")      \
  X(SuspectedDuplicate, "suspected-duplicate", 409, "Suspected duplicate of a request under another key",           \
    "The same request (same body, route and account) ran moments ago under another Idempotency-Key, so this one "    \
    "was held and nothing was processed; the detail names the earlier key. A retry should reuse that key. If a "    \
    "second, identical operation is really meant, resend with the header Idempotency-Duplicate-Confirmed: ?1.")     \
  X(DuplicateRejected, "duplicate-rejected", 409, "Duplicate of a request under another key",                       \
    "The same request (same body, route and account) ran moments ago under another Idempotency-Key, and this "      \
    "operation refuses such duplicates. Nothing was processed; the detail names the earlier key. Check its "        \
    "outcome; to repeat the operation, wait for the window the policy publishes or change the request.")            \
  X(StoreUnavailable, "store-unavailable", 503, "Idempotency store unavailable",                                    \
    "The key could not be checked, so nothing was processed. Retry after Retry-After with the same key.")           \
  X(DurabilityTooWeak, "durability-too-weak", 503, "Idempotency store not durable enough for this operation",      \
    "The operation's tier requires synchronous replication the store does not give now. Nothing was processed; "    \
    "retry later with the same key.")                                                                                \
  X(ExecutionAbandoned, "execution-abandoned", 500, "Execution ended without a response",                           \
    "The request started and ended without an answer; it may or may not have taken effect. The answer is stored: " \
    "retries with the key get it. Check the operation's outcome before using a new key.")                           \
  X(Internal, "internal", 500, "Internal error",                                                                    \
    "The server failed while handling the request; the detail quotes a request id for the operator. If the request " \
    "carried a key, retry with the same key.")                                                                       \
  /* the HTTP transport's refusals: nothing was processed */                                                         \
  X(BadRequest, "bad-request", 400, "Malformed request",                                                            \
    "The request line, target or headers could not be parsed, or the framing is ambiguous.")                        \
  X(MethodCase, "method-case", 400, "Method name in the wrong case",                                                \
    "A standard method spelt in another case (\"post\"); send it in upper case.")                                   \
  X(NotFound, "not-found", 404, "Not found", "No such route, or no such resource for this tenant.")                  \
  X(MethodNotAllowed, "method-not-allowed", 405, "Method not allowed", "The route does not take this method.")      \
  X(PayloadTooLarge, "payload-too-large", 413, "Request body too large", "The body exceeds the server's limit.")     \
  X(UriTooLong, "uri-too-long", 414, "Request target too long", "The request line exceeds 8 KiB.")                  \
  X(EncodingUnsupported, "encoding-unsupported", 415, "Content-Encoding not accepted",                              \
    "Send the body without Content-Encoding (a compressed body could inflate past the body limit).")                \
  X(ExpectationFailed, "expectation-failed", 417, "Expectation not supported",                                      \
    "Only \"Expect: 100-continue\" is supported.")                                                                   \
  X(TooManyConnections, "too-many-connections", 429, "Too many connections from one client",                       \
    "This client holds as many open connections as the server allows one client; reuse or close one.")             \
  X(HeadersTooLarge, "headers-too-large", 431, "Request header fields too large",                                   \
    "The request line and headers exceed the server's limit in bytes or number of fields.")                         \
  X(TransferCodingUnsupported, "transfer-coding-unsupported", 501, "Transfer-Encoding not supported",               \
    "The only transfer coding accepted is \"chunked\".")                                                            \
  X(Overloaded, "overloaded", 503, "Server overloaded",                                                             \
    "The server holds its maximum of open connections, buffered request bodies or stored answers being "           \
    "replayed; retry shortly (a replay with the same key). Nothing was processed.")                                  \
  /* serve's demo API and its fault rig */                                                                           \
  X(UnsupportedMediaType, "unsupported-media-type", 415, "Unsupported media type",                                  \
    "Send the body as JSON with Content-Type: application/json. Nothing was processed.")                            \
  X(BadQuery, "bad-query", 400, "Invalid query parameter", "A list query's limit or idempotency_key is invalid.")   \
  X(FaultInjection, "fault-injection", 400, "Fault injection refused",                                              \
    "A Sim-* header was sent to a server started without --allow-fault-injection, or its value is invalid.")        \
  X(SimulatedFailureBefore, "simulated-failure-before", 503, "Simulated failure before execution",                  \
    "Sim-Fail: before. Nothing was processed or stored; retry with the same key.")                                  \
  X(SimulatedFailureAfter, "simulated-failure-after", 500, "Simulated failure after execution started",             \
    "Sim-Fail: after. The answer is stored and replayed for the key.")                                              \
  X(FaultProfileUnknown, "fault-profile-unknown", 400, "Unknown fault profile",                                     \
    "A /faults/ route names a profile the fault rig does not know.")                                                \
  X(InjectedFault, "injected-fault", 0, "Injected fault",                                                           \
    "A /faults/ profile answered with the status it names; nothing was processed.")                                 \
  /* the proxy's upstream */                                                                                         \
  X(UpstreamUnavailable, "upstream-unavailable", 502, "Upstream unavailable",                                       \
    "The service behind the proxy could not be reached; the request was not sent. Retry with the same key.")        \
  X(UpstreamBusy, "upstream-busy", 503, "Proxy busy",                                                               \
    "The proxy has no free connection to its service for this route; the request was not sent. Retry later.")       \
  X(UpstreamTimeout, "upstream-timeout", 504, "Upstream did not answer in time",                                    \
    "The service has not answered in time. With a key, the key stays held while the proxy waits: retries get 409, " \
    "then the answer. Without one, the request may or may not have run.")                                           \
  X(UpstreamBroken, "upstream-broken", 502, "Upstream connection broke",                                            \
    "The connection to the service broke before its answer, on a request without a key: it may or may not have "  \
    "run.")                                                                                                          \
  X(UpstreamOutcomeUnknown, "upstream-outcome-unknown", 0, "Outcome unknown",                                       \
    "502 (the answer was cut or the connection broke) or 504 (no answer ever came): the service took the request, " \
    "so it may or may not have run. The answer is stored; check the operation's outcome before using a new key.")

enum class Problem {
#define IDEM_PROBLEM_ENUMERATOR(name, slug, status, title, meaning) name,
  IDEM_PROBLEMS(IDEM_PROBLEM_ENUMERATOR)
#undef IDEM_PROBLEM_ENUMERATOR
};

struct ProblemInfo {
  Problem problem;
  std::string_view slug;
  int status;  // 0: varies (see meaning)
  std::string_view title;
  std::string_view meaning;
};

/// Every entry, in declaration order.
inline constexpr std::array kProblems{
#define IDEM_PROBLEM_INFO(name, slug, status, title, meaning) ProblemInfo{Problem::name, slug, status, title, meaning},
    IDEM_PROBLEMS(IDEM_PROBLEM_INFO)
#undef IDEM_PROBLEM_INFO
};

[[nodiscard]] constexpr const ProblemInfo& problemInfo(Problem p) { return kProblems[static_cast<std::size_t>(p)]; }

}  // namespace idem::http
