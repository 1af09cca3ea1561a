#pragma once
// The seed's incident crafted in a real store with explicit timestamps, for the explain suites:
// a payment executed at 10:00, replayed three times, expired after 24 h, swept, and a late retry
// of the same payload executed again 32 minutes after expiry (acct_42, k_incident).
#include <string>

#include "core/store/pg.h"

namespace idem::test {

/// Inserts the incident's policy, generations and events; returns the policy's version.
inline std::string craftIncident(pg::Connection& c) {
  auto policy = c.exec(
      "INSERT INTO idem.policies (sha256, document, source, effective_at) VALUES ('incident-policy', $1::jsonb,"
      " 'policy.json', '2026-01-01T00:00:00Z') RETURNING version",
      {R"({"tiers":[{"name":"payments","routes":["POST /v1/payments"],"ttl":"24h","lease":"30s",)"
       R"("on_expired":"execute","archive_retention":"400d"}]})"});
  const std::string version = policy.str(0, "version");
  c.exec(
      "INSERT INTO idem.key_archive (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint,"
      "   state, resp_status, resource_ref, request_id, created_at, completed_at, expires_at, archived_at,"
      "   archived_by, purge_after)"
      " VALUES ('acct_42', 'POST /v1/payments', 'k_incident', 1, 'payments', $1::integer, '\\xaabb'::bytea, 'done',"
      "   201, 'pay_123', 'req_1', '2026-03-02T10:00:00Z', '2026-03-02T10:00:00.120Z', '2026-03-03T10:00:00Z',"
      "   '2026-03-03T10:05:00Z', 'sweeper', '2027-04-07T10:05:00Z')",
      {version});
  c.exec(
      "INSERT INTO idem.keys (tenant, endpoint, idem_key, generation, tier, policy_version, fingerprint, state,"
      "   resp_status, resource_ref, request_id, created_at, completed_at, expires_at)"
      " VALUES ('acct_42', 'POST /v1/payments', 'k_incident', 2, 'payments', $1::integer, '\\xaabb'::bytea, 'done',"
      "   201, 'pay_456', 'req_5', '2026-03-03T10:32:00Z', '2026-03-03T10:32:00.095Z', '2026-03-04T10:32:00Z')",
      {version});
  const char* event =
      "INSERT INTO idem.events (at, tenant, endpoint, idem_key, generation, tier, outcome, status, latency_ms,"
      "   request_id) VALUES ($1::timestamptz, 'acct_42', 'POST /v1/payments', 'k_incident', $2::integer, 'payments',"
      "   $3, $4::integer, $5::double precision, $6)";
  c.exec(event, {"2026-03-02T10:00:00.120Z", 1, "executed", 201, 120.0, "req_1"});
  c.exec(event, {"2026-03-02T10:00:05Z", 1, "replayed", 201, pg::Param::null(), "req_2"});
  c.exec(event, {"2026-03-02T10:00:35Z", 1, "replayed", 201, pg::Param::null(), "req_3"});
  c.exec(event, {"2026-03-02T14:00:00Z", 1, "replayed", 201, pg::Param::null(), "req_4"});
  c.exec(event, {"2026-03-03T10:32:00.095Z", 2, "executed_after_expiry", 201, 95.0, "req_5"});
  return version;
}

}  // namespace idem::test
