#include "tests/support/harness.h"

namespace idem::test {

const char* const kTestPolicy = R"json({
  // One tier per behaviour under test.
  "docs_url": "https://docs.test/idempotency",
  "tenant_header": "Account-Id",
  "tiers": [
    { "name": "payments", "routes": ["POST /v1/payments"], "ttl": "1h", "lease": "30s",
      "fingerprint": { "mode": "json" } },
    { "name": "short", "routes": ["POST /v1/short"], "ttl": "1s", "lease": "200ms" },
    { "name": "strict", "routes": ["POST /v1/strict"], "ttl": "1s", "lease": "200ms", "on_expired": "reject" },
    { "name": "lease", "routes": ["POST /v1/lease"], "ttl": "1h", "lease": "1s" },
    { "name": "wait", "routes": ["POST /v1/wait"], "ttl": "1h", "on_conflict": "wait:3s" },
    { "name": "success", "routes": ["POST /v1/success"], "ttl": "1h", "cache": "2xx-only" },
    { "name": "optional", "routes": ["POST /v1/optional"], "ttl": "1h", "key_required": false }
  ]
})json";

Harness::Harness(const std::string& conninfo, const std::string& policyText, int poolSize)
    : policy(policy::parsePolicy(policyText, "test-policy.json")),
      pool(conninfo, poolSize),
      store(pool),
      trace(pool, trace::TraceWriter::Options{std::chrono::milliseconds(20), 1000, 100000}),
      enforcer(policy, 0, store, trace) {}

Harness::~Harness() = default;

enforce::Request Harness::post(const std::string& path, const std::string& key, const std::string& body,
                               const std::string& tenant) {
  enforce::Request r;
  r.method = "POST";
  r.path = path;
  r.body = body;
  r.headers.emplace_back("Content-Type", "application/json");
  if (!key.empty()) r.headers.emplace_back("Idempotency-Key", key);
  if (!tenant.empty()) r.tenant = tenant;  // as authenticated by the caller, not a header
  return r;
}

enforce::Response Harness::roundTrip(const enforce::Request& request, int status, int* executions) {
  auto d = enforcer.begin(request);
  if (d.kind != enforce::Decision::Kind::Execute) return d.response;
  if (executions) ++*executions;
  enforce::Response r;
  r.status = status;
  r.headers = {{"Content-Type", "application/json"}, {"Set-Cookie", "session=secret"}, {"Location", "/v1/x"}};
  r.body = R"({"generation":)" + std::to_string(d.ticket->generation()) + "}";
  return enforcer.complete(*d.ticket, std::move(r));
}

std::string header(const enforce::Response& r, const std::string& name) {
  auto v = http::findHeader(r.headers, name);
  return v ? std::string(*v) : std::string();
}

}  // namespace idem::test
