// A tier's "amount" (docs/design.md §4): parsed like every policy field (errors name the file and
// the field), and read from a stored response as exact decimal text — never through a double,
// so 2499.99 is never 2499.98999.
#include "core/policy/amount.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/policy/policy.h"
#include "core/policy/policy_json.h"
#include "core/policy/route_template.h"

namespace idem::policy {
namespace {

using internal::member;
using internal::shown;
using internal::typeName;
using nlohmann::json;

// More digits before the decimal point than this is no amount anyone was charged (and keeps
// the minor units inside a 64-bit integer for whoever computes with them).
constexpr std::size_t kMaxWholeDigits = 15;

bool isCurrencyCode(std::string_view code) {
  return code.size() == 3 && std::all_of(code.begin(), code.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// ISO 4217 minor-unit exponents other than 2.
int decimalsOf(std::string_view currency) {
  static constexpr std::array<std::string_view, 17> kNone = {"BIF", "CLP", "DJF", "GNF", "ISK", "JPY",
                                                             "KMF", "KRW", "PYG", "RWF", "UGX", "UYI",
                                                             "VND", "VUV", "XAF", "XOF", "XPF"};
  static constexpr std::array<std::string_view, 7> kThree = {"BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"};
  if (std::find(kNone.begin(), kNone.end(), currency) != kNone.end()) return 0;
  if (std::find(kThree.begin(), kThree.end(), currency) != kThree.end()) return 3;
  if (currency == "CLF" || currency == "UYW") return 4;
  return 2;
}

// A decimal number as written: sign, digits with the point at `point` (digits.size() when whole).
struct Decimal {
  bool negative = false;
  std::string digits;  // no leading zeros kept beyond one
  long long point = 0;
};

// "-2499.50", "249900", "1e+20" (a JSON number's text); nullopt when it is not one.
std::optional<Decimal> parseDecimal(std::string_view text) {
  Decimal d;
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) d.negative = text[i++] == '-';
  bool seenPoint = false, seenDigit = false;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.' && !seenPoint) {
      seenPoint = true;
      d.point = static_cast<long long>(d.digits.size());
    } else if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      d.digits += text[i];
      seenDigit = true;
    } else {
      return std::nullopt;
    }
  }
  if (!seenDigit) return std::nullopt;
  if (!seenPoint) d.point = static_cast<long long>(d.digits.size());
  if (i < text.size()) {  // exponent
    const std::string_view e = text.substr(i + 1);
    std::size_t k = 0;
    bool minus = false;
    if (k < e.size() && (e[k] == '-' || e[k] == '+')) minus = e[k++] == '-';
    if (k == e.size() || e.size() - k > 4) return std::nullopt;
    long long exp = 0;
    for (; k < e.size(); ++k) {
      if (!std::isdigit(static_cast<unsigned char>(e[k]))) return std::nullopt;
      exp = exp * 10 + (e[k] - '0');
    }
    d.point += minus ? -exp : exp;
  }
  return d;
}

// The decimal's digits before and after the point, with the point moved `shift` places left.
std::pair<std::string, std::string> split(const Decimal& d, long long shift) {
  const long long point = d.point - shift;
  std::string whole, fraction;
  const long long n = static_cast<long long>(d.digits.size());
  for (long long i = std::min(point, 0LL); i < std::max(point, n); ++i) {
    const char c = i >= 0 && i < n ? d.digits[static_cast<std::size_t>(i)] : '0';
    (i < point ? whole : fraction) += c;
  }
  whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size()));
  if (whole.empty()) whole = "0";
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  return {whole, fraction};
}

AmountSpec spec(const json& v, const std::string& source, const std::string& path) {
  auto fail = [&](const std::string& at, const std::string& message) { internal::fail(source, at, message); };
  if (!v.is_object())
    fail(path, "must be an object such as {\"value\": \"/amount\", \"currency\": \"/currency\", \"minor_units\": true}, "
               "not " + std::string(typeName(v)));
  internal::rejectUnknown(v, source, path, {"value", "currency", "default_currency", "minor_units"});
  auto pointer = [&](std::string_view name, bool required) -> std::string {
    const auto it = v.find(name);
    if (it == v.end()) {
      if (required) fail(member(path, name), "missing (required: the JSON pointer to the amount, e.g. \"/amount\")");
      return {};
    }
    if (!it->is_string() || !it->get_ref<const std::string&>().starts_with('/'))
      fail(member(path, name), shown(*it) + " is not a JSON pointer (start it with '/', e.g. \"/" + std::string(name) + "\")");
    try {
      (void)json::json_pointer(it->get<std::string>());
    } catch (const json::exception&) {
      fail(member(path, name), shown(*it) + " is not a JSON pointer (write '~' as ~0 and '/' inside a name as ~1)");
    }
    return it->get<std::string>();
  };
  AmountSpec s;
  s.value = pointer("value", true);
  s.currency = pointer("currency", false);
  if (const auto it = v.find("default_currency"); it != v.end()) {
    if (!it->is_string() || !isCurrencyCode(it->get_ref<const std::string&>()))
      fail(member(path, "default_currency"), shown(*it) + " is not a currency code (three letters, ISO 4217, e.g. \"USD\")");
    s.defaultCurrency = upper(it->get<std::string>());
  }
  if (s.currency.empty() && s.defaultCurrency.empty())
    fail(path, "names no currency: add \"currency\" (the JSON pointer to the response's currency code, e.g. "
               "\"/currency\") or \"default_currency\" (e.g. \"USD\")");
  const auto minor = v.find("minor_units");
  if (minor == v.end())
    fail(member(path, "minor_units"),
         "missing (required: true when the response holds 249900 for 2,499.00 — cents, the currency's minor "
         "units — or false when it holds 2499.00; a wrong guess is a hundredfold error in a letter)");
  if (!minor->is_boolean())
    fail(member(path, "minor_units"), "must be true or false, not " + std::string(typeName(*minor)) + " (" + shown(*minor) + ")");
  s.minorUnits = minor->get<bool>();
  return s;
}

// As a policy file writes it (absent members left out), so the published form parses back.
json specJson(const AmountSpec& s) {
  json out = {{"value", s.value}};
  if (!s.currency.empty()) out["currency"] = s.currency;
  if (!s.defaultCurrency.empty()) out["default_currency"] = s.defaultCurrency;
  out["minor_units"] = s.minorUnits;
  return out;
}

}  // namespace

const AmountSpec* AmountPaths::forRoute(std::string_view route) const {
  if (const auto it = byRoute.find(std::string(route)); it != byRoute.end()) return &it->second;
  return all ? &*all : nullptr;
}

AmountPaths parseAmountPaths(const json& v, const std::string& source, const std::string& path) {
  AmountPaths paths;
  if (v.is_object() && !v.empty() && std::none_of(v.items().begin(), v.items().end(), [](const auto& item) {
        return item.key().find(' ') != std::string::npos;
      })) {
    paths.all = spec(v, source, path);
    return paths;
  }
  if (!v.is_object() || v.empty())
    internal::fail(source, path,
                   "must be {\"value\": \"/amount\", \"currency\": \"/currency\", \"minor_units\": true}, or such an "
                   "object per route ({\"POST /v1/refunds\": {…}}), not " + shown(v));
  for (const auto& [route, s] : v.items()) {
    const auto space = route.find(' ');
    std::string problem;
    const auto target = space == std::string::npos ? std::nullopt : canonicalPathTemplate(route.substr(space + 1), problem);
    const auto canonical = target ? std::optional(route.substr(0, space) + " " + *target) : std::nullopt;
    if (!canonical || !std::all_of(route.begin(), route.begin() + static_cast<long>(space), [](char c) { return c >= 'A' && c <= 'Z'; }))
      internal::fail(source, member(path, route),
                     "is not a route (write \"METHOD /path\", e.g. \"POST /v1/refunds\"), and a per-route amount "
                     "cannot be mixed with \"value\"/\"currency\" at the same level");
    if (!paths.byRoute.emplace(*canonical, spec(s, source, member(path, route))).second)
      internal::fail(source, member(path, route), "is the same route as another entry here");
  }
  return paths;
}

json amountPathsJson(const AmountPaths& paths) {
  if (paths.all) return specJson(*paths.all);
  if (paths.byRoute.empty()) return nullptr;
  json out = json::object();
  for (const auto& [route, s] : paths.byRoute) out[route] = specJson(s);
  return out;
}

AmountReading readAmount(const AmountSpec& spec, std::string_view body) {
  auto problem = [](std::string text) { return AmountReading{std::nullopt, std::move(text)}; };
  if (body.empty()) return problem("no response body is stored");
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded()) return problem("the stored response is not JSON");
  const json::json_pointer valuePtr(spec.value);
  if (!doc.contains(valuePtr)) return problem("the response has no " + spec.value);
  const json& value = doc.at(valuePtr);
  std::optional<Decimal> d;
  if (value.is_number()) d = parseDecimal(value.dump());
  else if (value.is_string()) d = parseDecimal(value.get_ref<const std::string&>());
  if (!d) return problem(spec.value + " is " + shown(value) + ", not a number");

  std::string currency = spec.defaultCurrency;
  if (!spec.currency.empty()) {
    const json::json_pointer currencyPtr(spec.currency);
    if (doc.contains(currencyPtr)) {
      const json& c = doc.at(currencyPtr);
      if (!c.is_string() || !isCurrencyCode(c.get_ref<const std::string&>()))
        return problem(spec.currency + " is " + shown(c) + ", not a currency code");
      currency = upper(c.get<std::string>());
    }
  }
  if (currency.empty()) return problem("the response has no " + spec.currency + " and the policy names no default_currency");

  const int decimals = decimalsOf(currency);
  auto [whole, fraction] = split(*d, spec.minorUnits ? decimals : 0);
  if (spec.minorUnits && static_cast<int>(fraction.size()) > decimals)
    return problem(spec.value + " is " + shown(value) + ", not a whole number of " + currency + " minor units");
  if (static_cast<int>(fraction.size()) > decimals)
    return problem(spec.value + " is " + shown(value) + ": more decimals than " + currency + " has (" +
                   std::to_string(decimals) + ")");
  if (whole.size() > kMaxWholeDigits)
    return problem(spec.value + " is " + shown(value) + ": too large to be an amount");
  fraction.resize(static_cast<std::size_t>(decimals), '0');
  Money m{currency, decimals > 0 ? whole + "." + fraction : whole, d->negative};
  if (m.digits.find_first_not_of("0.") == std::string::npos) m.negative = false;  // no "-$0.00"
  return {m, {}};
}

std::string formatMoney(const Money& m) {
  const auto point = m.digits.find('.');
  const std::string whole = m.digits.substr(0, point);
  std::string grouped;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    if (i > 0 && (whole.size() - i) % 3 == 0) grouped += ',';
    grouped += whole[i];
  }
  if (point != std::string::npos) grouped += m.digits.substr(point);
  std::string symbol = m.currency + " ";
  if (m.currency == "USD") symbol = "$";
  else if (m.currency == "EUR") symbol = "€";
  else if (m.currency == "GBP") symbol = "£";
  else if (m.currency == "JPY") symbol = "¥";
  return (m.negative ? "-" : "") + symbol + grouped;
}

}  // namespace idem::policy
