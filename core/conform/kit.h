#pragma once
// The conformance kit behind `idemctl conform URL`: the contract's scenarios (the draft's
// 400/409/422, replay fidelity, tenant scope, expiry, the same body under two keys) run against
// any HTTP service that claims draft-ietf-httpapi-idempotency-key-header semantics. Each
// scenario says what it sent, what it expected and what came back (docs/conformance.md).
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/http/headers.h"

namespace idem::conform {

/// "POST /v1/charges": a method and a path (the URL's own path is put before it).
struct Route {
  std::string method;
  std::string path;
  /// "METHOD /path" with an upper-case method; nullopt otherwise.
  static std::optional<Route> parse(std::string_view text);
  [[nodiscard]] std::string text() const { return method + " " + path; }
};

/// What the service publishes for a key used again after its TTL (draft §2.3).
enum class AfterExpiry { Either, Execute, Reject };
/// What the service promises for the same body under a new key (issue 32); Unstated: informational.
enum class CrossKey { Unstated, Off, Observe, Hold, Reject };

struct Options {
  std::string url;  // http(s)://HOST[:PORT][/prefix]
  Route route{"POST", "/v1/charges"};
  std::optional<Route> slowRoute;    // the concurrent scenario's route (default: route)
  std::optional<Route> expiryRoute;  // the expiry scenario's route (default: route)
  /// The request body; "{unique}" is replaced by a value new to each scenario of each run.
  std::string body = R"({"amount":1000,"currency":"usd"})";
  std::string varyField;  // the member changed for payload-mismatch; empty: the body's first
  http::Headers headers;      // sent with every request (auth, content type)
  http::Headers slowHeaders;  // sent with the concurrent scenario's requests (a delay header)
  std::string tenantHeader;   // empty: the tenant-scope scenario is skipped
  std::string tenants[2] = {"conform-a", "conform-b"};  // its values; the first goes with every request
  std::string idField = "id";  // where a created resource's id is in a 2xx body (a.b.c or /a/b/c)
  std::string countUrl;        // GET here answers the service's execution count (then preferred)
  std::string countField = "total";
  std::chrono::milliseconds timeout{10'000};  // per request
  std::optional<std::chrono::milliseconds> ttl;
  AfterExpiry afterExpiry = AfterExpiry::Either;
  CrossKey crossKey = CrossKey::Unstated;
  http::Headers crossKeyConfirm;  // with Hold: the header that confirms a duplicate on purpose
  std::string keyHeader = "Idempotency-Key";  // a service that reads the key from another header
  std::size_t maxKeyLength = 255;
  std::vector<std::string> replayHeaders{"Content-Type", "Content-Language", "Location", "ETag", "Link"};
  std::vector<std::string> only;  // scenario names; empty: all
  std::vector<std::string> skip;
  std::string runId;  // empty: a random one
};

enum class Verdict { Pass, Fail, Skip, Info };
[[nodiscard]] std::string_view verdictName(Verdict v);

/// One request and its answer, as evidence.
struct Exchange {
  std::string label;  // "first", "retry", "tenant b", ...
  std::string method;
  std::string path;
  http::Headers requestHeaders;
  std::string requestBody;
  int status = 0;  // 0: no answer (error says why)
  http::Headers responseHeaders;
  std::string responseBody;
  std::string error;
  double ms = 0;  // from sending to the whole answer
};

struct ScenarioResult {
  std::string name;
  std::string title;    // what it checks, in a line
  std::string draft;    // the draft's section it holds the service to
  std::string expects;  // what a conforming service answers
  Verdict verdict = Verdict::Skip;
  std::string reason;  // why the verdict, with the numbers that decided it
  std::vector<Exchange> exchanges;
};

struct Report {
  std::string target;  // the URL
  std::string route;
  std::string runId;
  std::string counting;  // how executions were counted, in words
  std::vector<ScenarioResult> scenarios;
  [[nodiscard]] int count(Verdict v) const;
  [[nodiscard]] bool passed() const { return count(Verdict::Fail) == 0; }
};

/// A scenario's name and what it checks, in the order they run.
struct ScenarioInfo {
  std::string name;
  std::string title;
};
[[nodiscard]] const std::vector<ScenarioInfo>& scenarios();

/// The service gave no HTTP answer to the kit's first request (or the URL is not one).
struct Unreachable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Runs the scenarios (all, or the ones `only` names less the ones `skip` names).
/// Throws Unreachable when the first request gets no answer, std::invalid_argument for options
/// that cannot be run (an unknown scenario name, a body that is not JSON where one must be).
[[nodiscard]] Report run(const Options& options);

}  // namespace idem::conform
