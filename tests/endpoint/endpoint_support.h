#pragma once
// Shared by the endpoint suites: an in-process server over a fresh migrated database, and
// small helpers to fire requests at it over real HTTP on loopback.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/client/client.h"
#include "core/endpoint/server.h"
#include "core/faultrig/faultrig.h"
#include "tests/support/testdb.h"

namespace idem::test {

/// The policy the endpoint suites run with: one tier per behaviour, on the endpoint's routes.
inline const char* const kEndpointPolicy = R"json({
  "docs_url": "https://docs.test/idempotency",
  "tenant_header": "Account-Id",
  "tiers": [
    { "name": "payments", "routes": ["POST /v1/payments"], "ttl": "1h", "lease": "30s",
      "fingerprint": { "mode": "json" } },
    { "name": "refunds", "routes": ["POST /v1/refunds"], "ttl": "1s", "lease": "200ms",
      "on_expired": "execute" },
    { "name": "orders", "routes": ["POST /v1/orders"], "ttl": "1h", "on_conflict": "wait:3s",
      "fingerprint": { "mode": "fields", "fields": ["/item", "/quantity"] } },
    { "name": "webhooks", "routes": ["POST /v1/webhooks/ack"], "key_required": false, "ttl": "1s", "lease": "200ms",
      "on_expired": "reject" }
  ]
})json";

struct LiveServer {
  explicit LiveServer(const std::string& prefix, const std::string& policyText = kEndpointPolicy,
                      bool allowFaults = true, bool replayCache = true)
      : db(prefix) {
    endpoint::ServerOptions o;
    if (!replayCache) o.replayCache.maxAge = std::chrono::milliseconds(0);
    o.conninfo = db.conninfo();
    o.policy = policy::parsePolicy(policyText, "endpoint-test-policy.json");
    o.allowFaultInjection = allowFaults;
    if (allowFaults) o.rawRoute = faultrig::makeFaultRig;
    o.threads = 32;
    o.traceFlushInterval = std::chrono::milliseconds(20);
    server = std::make_unique<endpoint::Server>(std::move(o));
    server->start();
  }
  ~LiveServer() {
    server.reset();  // stop and join before the database goes
  }

  [[nodiscard]] std::unique_ptr<client::Client> client() const {
    return std::make_unique<client::Client>("127.0.0.1", server->port());
  }
  long long count(const std::string& sql, const std::vector<pg::Param>& params = {}) const {
    auto c = db.connect();
    return c.exec(sql, params).integer(0, "n");
  }
  long long ledgerRows(const std::string& key) const {
    return count("SELECT count(*) AS n FROM idem_demo.ledger WHERE idem_key = $1", {key});
  }
  long long keyRows(const std::string& key) const {
    return count("SELECT count(*) AS n FROM idem.keys WHERE idem_key = $1", {key});
  }

  TestDatabase db;
  std::unique_ptr<endpoint::Server> server;
};

inline http::Headers jsonHeaders(const std::string& key, const std::string& tenant = "acct_1") {
  http::Headers h{{"Content-Type", "application/json"}};
  if (!key.empty()) h.emplace_back("Idempotency-Key", key);
  if (!tenant.empty()) h.emplace_back("Account-Id", tenant);
  return h;
}

inline const std::string kPayment = R"({"amount":1000,"currency":"usd","customer":"cus_1"})";

inline nlohmann::json parse(const client::ClientResponse& r) { return nlohmann::json::parse(r.body, nullptr, false); }

/// A counter or gauge without labels from a /metrics body; -1 when absent.
inline long long metricValue(const std::string& metricsBody, const std::string& name) {
  const auto at = metricsBody.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stoll(metricsBody.substr(at + name.size() + 2));
}

}  // namespace idem::test
