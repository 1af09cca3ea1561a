#pragma once
// The simulated API's resources (docs/design.md §5): payments, refunds, orders and webhook acks.
// Validation and construction only; no HTTP and no database here.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/endpoint/ledger.h"

namespace idem::endpoint {

struct ResourceKind {
  std::string_view route;     // "/v1/payments"
  std::string_view object;    // "payment" (also the ledger kind)
  std::string_view idPrefix;  // "pay_"
  int successStatus = 201;
};

/// The kind served at a POST route, or nullptr.
[[nodiscard]] const ResourceKind* kindForRoute(std::string_view route);
/// The kind listed at a GET collection ("/v1/payments"), or nullptr (webhook acks are not listed).
[[nodiscard]] const ResourceKind* kindForCollection(std::string_view route);
[[nodiscard]] const std::vector<ResourceKind>& resourceKinds();

/// Checks a request body: a JSON object with the kind's required fields and types. Returns
/// the error in words ("amount: must be a positive integer") or nullopt when valid.
[[nodiscard]] std::optional<std::string> validateBody(const ResourceKind& kind, const nlohmann::json& body);

/// A new random id with the kind's prefix ("pay_3kq…").
[[nodiscard]] std::string newResourceId(std::string_view prefix);

struct Execution {
  std::string id;
  nlohmann::json resource;  // the response body
  LedgerRow ledger;         // tenant, endpoint, key, generation and request id left to the caller
};

/// Builds the resource from a validated body; `failed` marks a Sim-Fail: after execution.
[[nodiscard]] Execution buildResource(const ResourceKind& kind, const nlohmann::json& body,
                                      long long createdEpochSeconds, bool failed);

}  // namespace idem::endpoint
