#include "core/sim/scenarios.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/sim/config_parse.h"

namespace idem::sim {
namespace {

// charge-twice.json: 1 % of answers lost after the payment ran, and for two minutes 30 % of
// requests find the key store unreachable: 503 with Retry-After 40 min.
constexpr std::string_view kChargeTwice = R"({ "seed": 1, "clients": { "operations": 120000, "arrival_rate_per_s": 200 },
  "policy": { "preset": "stripe" },
  "server": { "latency": { "median": "150ms", "p99": "2s" }, "lost_response_rate": 0.01,
    "events": [ { "at": "200s", "duration": "120s", "outage": true, "outage_fraction": 0.3, "retry_after": "40m" } ] },
  "store": { "ttl": "30m", "purge_lag": "0s", "stored_at": "first_receipt" } })";

// storm.json: clients retry until a 10 s deadline against 700 requests/s; a 5 s spike of +800/s.
constexpr std::string_view kStorm = R"({ "seed": 1, "clients": { "operations": 15000, "arrival_rate_per_s": 100 },
  "policy": { "max_attempts": 100, "timeout": "1s", "deadline": "10s", "backoff": "exponential",
    "jitter": "full", "base": "1s", "multiplier": 2, "cap": "10s",
    "retry_on": ["timeout", "5xx", "409"], "retry_after": "ignore", "budget": null },
  "server": { "latency": { "median": "50ms", "p99": "200ms" }, "capacity_rps": 700,
    "events": [ { "at": "20s", "duration": "5s", "extra_rate_per_s": 800 } ] },
  "store": { "ttl": "24h" } })";
constexpr std::string_view kStormB = R"({ "max_attempts": 100, "timeout": "1s", "deadline": "10s", "backoff": "none",
  "jitter": "none", "base": "1s", "multiplier": 2, "cap": "10s",
  "retry_on": ["timeout", "5xx", "409"], "retry_after": "ignore", "budget": null })";

// budget-spike.json: steady load with 1 % failures and a short spike, clients with a token
// budget (10 tokens, 0.1 per success) that stops retries when failures pile up.
constexpr std::string_view kBudgetSpike = R"({ "seed": 7, "clients": { "operations": 100000, "arrival_rate_per_s": 200 },
  "policy": { "max_attempts": 4, "timeout": "3s", "deadline": "60s", "backoff": "exponential",
    "jitter": "full", "base": "500ms", "multiplier": 2, "cap": "5s", "retry_on": ["timeout", "5xx", "409"],
    "retry_after_cap": "60s", "budget": { "type": "token_bucket", "max_tokens": 10, "ratio": 0.1 } },
  "server": { "latency": { "median": "100ms", "p99": "1s" }, "failure_rate": 0.01, "capacity_rps": 0,
    "events": [ { "at": "20s", "duration": "5s", "extra_rate_per_s": 40 } ] },
  "store": { "ttl": "30m", "purge_lag": "0s", "stored_at": "first_receipt" } })";

// new-keys.json: an agent calling a slow payment API re-keys half its retries (told ids must
// be unique); a mesh in front retries 409 and 5xx (Envoy's retriable-4xx); one operation in a
// thousand is the same charge on purpose. Cross-key detection holds repeats for 10 minutes.
constexpr std::string_view kNewKeys = R"({ "seed": 3, "clients": { "operations": 20000, "arrival_rate_per_s": 20,
    "new_key_on_retry": 0.5, "same_body_share": 0.001 },
  "policy": { "max_attempts": 3, "timeout": "10s", "deadline": "120s", "backoff": "exponential",
    "jitter": "full", "base": "2s", "multiplier": 2, "cap": "30s", "retry_on": ["timeout", "5xx", "409"],
    "retry_after": "max", "budget": null },
  "server": { "latency": { "median": "2s", "p99": "15s" }, "failure_rate": 0.01, "lost_response_rate": 0.005 },
  "store": { "ttl": "24h", "stored_at": "first_receipt", "cross_key": { "mode": "hold", "window": "10m" } },
  "intermediary": { "preset": "envoy-retriable-4xx" } })";

}  // namespace

const std::vector<BuiltInScenario>& builtInScenarios() {
  static const std::vector<BuiltInScenario> all{
      {"charge-twice", "Which one charges twice? (30 min TTL)", kChargeTwice, R"({ "preset": "urllib3" })"},
      {"storm", "Retry storm: jitter vs none", kStorm, kStormB},
      {"budget-spike", "Retry budget under a short spike", kBudgetSpike, R"({ "preset": "stripe" })"},
      {"new-keys", "Retries under new keys: cross-key detection", kNewKeys, R"({ "preset": "stripe-node" })"},
  };
  return all;
}

const BuiltInScenario* findScenario(std::string_view id) {
  const auto& all = builtInScenarios();
  auto it = std::find_if(all.begin(), all.end(), [id](const BuiltInScenario& s) { return s.id == id; });
  return it == all.end() ? nullptr : &*it;
}

SimConfig scenarioConfig(const BuiltInScenario& scenario) { return parseConfigText(scenario.config); }

Policy scenarioPolicyB(const BuiltInScenario& scenario) {
  return parseConfig(nlohmann::json{{"policy", nlohmann::json::parse(scenario.policyB)}}).policy;
}

}  // namespace idem::sim
