#pragma once
// Where a route's stored response says how much was charged (a tier's "amount" in the policy
// file, docs/design.md §4), and reading it: support's letter to a customer names the amount of
// each charge, read from the response the store kept, never guessed from a ledger.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace idem::policy {

/// JSON pointers into one route's response body.
struct AmountSpec {
  std::string value;            ///< "/amount": a JSON number or a decimal string
  std::string currency;         ///< "/currency": an ISO 4217 code; "" when the response names none
  std::string defaultCurrency;  ///< "USD" when the response names none (upper case); "" when unset
  /// true: 249900 means 2,499.00 (the currency's minor units, cents); false: the value is in
  /// major units and may have decimals.
  bool minorUnits = true;
  bool operator==(const AmountSpec&) const = default;
};

/// A tier's "amount": one spec for all its routes, or one per route.
struct AmountPaths {
  std::optional<AmountSpec> all;
  std::map<std::string, AmountSpec> byRoute;  ///< canonical route ("POST /v1/refunds") -> spec
  /// The spec for route (canonical), or nullptr when the tier names none for it.
  [[nodiscard]] const AmountSpec* forRoute(std::string_view route) const;
  [[nodiscard]] bool empty() const { return !all && byRoute.empty(); }
  bool operator==(const AmountPaths&) const = default;
};

/// An amount of money, exactly as the response wrote it.
struct Money {
  std::string currency;  ///< "USD"
  /// In major units with the currency's decimals, no sign, no grouping: "2499.00", "5000" (JPY).
  std::string digits;
  bool negative = false;
  bool operator==(const Money&) const = default;
};

/// "$2,499.00", "€250.00", "£1.50", "¥5,000", else "CHF 12.50"; "-$29.90" when negative.
[[nodiscard]] std::string formatMoney(const Money& m);

/// The amount in a response body, or why there is none ("the response has no /amount", "/amount
/// is \"abc\", not a number", …: internal words, for support).
struct AmountReading {
  std::optional<Money> money;
  std::string problem;  ///< "" when money is set
};
[[nodiscard]] AmountReading readAmount(const AmountSpec& spec, std::string_view responseBody);

/// Parses a tier's "amount" member as the policy file writes it; throws PolicyError naming
/// source and path. Route names are kept in canonical form; whether they are the tier's own
/// routes is the caller's check (parsePolicy makes it).
[[nodiscard]] AmountPaths parseAmountPaths(const nlohmann::json& v, const std::string& source, const std::string& path);

/// The published form, as the policy file writes it: {"value", "currency", "default_currency",
/// "minor_units"} (absent members left out), or such an object per route; null when empty.
[[nodiscard]] nlohmann::json amountPathsJson(const AmountPaths& paths);

}  // namespace idem::policy
