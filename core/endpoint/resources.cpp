#include "core/endpoint/resources.h"

#include <random>

namespace idem::endpoint {
namespace {

using nlohmann::json;

bool positiveInteger(const json& v, long long max) {
  if (!v.is_number_integer()) return false;
  const long long n = v.get<long long>();
  return n > 0 && n <= max;
}

/// U+0000 is valid JSON ("\u0000") but the ledger's jsonb cannot hold it: refused up front
/// rather than failing the execution's commit.
bool nonEmptyString(const json& v, std::size_t max = 255) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  return !s.empty() && s.size() <= max && s.find('\0') == std::string::npos;
}

bool currencyCode(const json& v) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() != 3) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
  return true;
}

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

constexpr long long kMaxAmount = 100'000'000'000LL;  // minor units

}  // namespace

const std::vector<ResourceKind>& resourceKinds() {
  static const std::vector<ResourceKind> kinds{
      {"/v1/payments", "payment", "pay_", 201},
      {"/v1/refunds", "refund", "re_", 201},
      {"/v1/orders", "order", "ord_", 201},
      {"/v1/webhooks/ack", "webhook_ack", "ack_", 200},
  };
  return kinds;
}

const ResourceKind* kindForRoute(std::string_view route) {
  for (const auto& k : resourceKinds())
    if (k.route == route) return &k;
  return nullptr;
}

const ResourceKind* kindForCollection(std::string_view route) {
  const ResourceKind* k = kindForRoute(route);
  return k && k->object != "webhook_ack" ? k : nullptr;
}

std::optional<std::string> validateBody(const ResourceKind& kind, const json& body) {
  if (!body.is_object()) return "the body must be a JSON object";
  auto need = [&](const char* field, auto&& ok, const char* rule) -> std::optional<std::string> {
    auto it = body.find(field);
    if (it == body.end()) return std::string(field) + ": required";
    if (!ok(*it)) return std::string(field) + ": " + rule;
    return std::nullopt;
  };
  auto optional = [&](const char* field, auto&& ok, const char* rule) -> std::optional<std::string> {
    auto it = body.find(field);
    if (it == body.end() || ok(*it)) return std::nullopt;
    return std::string(field) + ": " + rule;
  };
  const auto amount = [](const json& v) { return positiveInteger(v, kMaxAmount); };
  const auto text = [](const json& v) { return nonEmptyString(v); };
  std::optional<std::string> err;
  if (kind.object == "payment") {
    if ((err = need("amount", amount, "must be a positive integer (minor units, e.g. 1000 for 10.00)"))) return err;
    if ((err = need("currency", currencyCode, "must be a three-letter ISO 4217 code, e.g. \"usd\""))) return err;
    if ((err = need("customer", text, "must be a non-empty string of at most 255 characters, without U+0000")))
      return err;
  } else if (kind.object == "refund") {
    const auto payment = [](const json& v) {
      return nonEmptyString(v) && v.get_ref<const std::string&>().rfind("pay_", 0) == 0;
    };
    if ((err = need("payment", payment, "must be a payment id (\"pay_…\")"))) return err;
    if ((err = need("amount", amount, "must be a positive integer (minor units)"))) return err;
  } else if (kind.object == "order") {
    const auto quantity = [](const json& v) { return positiveInteger(v, 1000); };
    if ((err = need("item", text, "must be a non-empty string of at most 255 characters, without U+0000"))) return err;
    if ((err = need("quantity", quantity, "must be an integer from 1 to 1000"))) return err;
    if ((err = optional("customer", text, "must be a non-empty string of at most 255 characters, without U+0000")))
      return err;
  } else {
    if ((err = need("event", text, "must be a non-empty string of at most 255 characters, without U+0000"))) return err;
  }
  return std::nullopt;
}

std::string newResourceId(std::string_view prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id += kAlphabet[rng() % 62];
  return id;
}

Execution buildResource(const ResourceKind& kind, const json& body, long long created, bool failed) {
  Execution e;
  e.id = newResourceId(kind.idPrefix);
  json r{{"id", e.id}, {"object", kind.object}};
  LedgerRow& row = e.ledger;
  row.id = e.id;
  row.kind = std::string(kind.object);
  row.status = failed ? "failed" : "succeeded";
  if (kind.object == "payment") {
    r["amount"] = body["amount"];
    r["currency"] = lower(body["currency"].get<std::string>());
    r["customer"] = body["customer"];
    r["status"] = failed ? "failed" : "succeeded";
    row.amount = body["amount"].get<long long>();
    row.currency = r["currency"].get<std::string>();
    row.customer = body["customer"].get<std::string>();
  } else if (kind.object == "refund") {
    r["payment"] = body["payment"];
    r["amount"] = body["amount"];
    r["status"] = failed ? "failed" : "succeeded";
    row.amount = body["amount"].get<long long>();
  } else if (kind.object == "order") {
    r["item"] = body["item"];
    r["quantity"] = body["quantity"];
    if (body.contains("customer")) {
      r["customer"] = body["customer"];
      row.customer = body["customer"].get<std::string>();
    }
    r["status"] = failed ? "failed" : "created";
  } else {
    r["event"] = body["event"];
    r["received"] = !failed;
  }
  r["created"] = created;
  e.resource = r;
  row.payload = r;
  return e;
}

}  // namespace idem::endpoint
