#pragma once
// The ledger (idem_demo.ledger, migration 0004): the payment channel's side of each execution.
// Its INSERT is handed to the Enforcer as a same-transaction statement, so a row exists exactly
// when the key's completion committed. All SQL for the table lives here.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/store/keystore.h"

namespace idem::endpoint {

struct LedgerRow {
  std::string id;    // pay_…
  std::string kind;  // payment | refund | order | webhook_ack
  std::string tenant;
  std::string endpoint;  // "POST /v1/payments"
  std::optional<std::string> key;
  int generation = 0;                // 0: no key (stored as NULL)
  std::string status = "succeeded";  // or "failed" (Sim-Fail: after)
  std::optional<long long> amount;
  std::optional<std::string> currency;
  std::optional<std::string> customer;
  std::string requestId;
  nlohmann::json payload;  // what the channel received, including downstream_idempotency_key
};

/// The row's INSERT with bound parameters.
[[nodiscard]] store::SideStatement insertStatement(const LedgerRow& row);

/// Rows of one kind and tenant, newest first; only those of `key` when given. Each row is the
/// payload plus ledger fields (ledger_status, idempotency_key, generation, recorded_at).
[[nodiscard]] nlohmann::json listLedger(pg::Connection& conn, const std::string& kind, const std::string& tenant,
                                        const std::optional<std::string>& key, int limit);

/// One row by id within a tenant, or nullopt.
[[nodiscard]] std::optional<nlohmann::json> findLedger(pg::Connection& conn, const std::string& kind,
                                                       const std::string& tenant, const std::string& id);

}  // namespace idem::endpoint
