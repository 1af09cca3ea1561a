#include "core/faultrig/faultprofile.h"

#include <algorithm>
#include <charconv>

namespace idem::faultrig {

namespace {

constexpr int kStatuses[] = {409, 429, 500, 502, 503, 504};
constexpr std::string_view kRetryAfterInfix = "-retry-after-";
constexpr long long kMaxRetryAfterSeconds = 86'400;

bool parseWhole(std::string_view text, long long lo, long long hi, long long& out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size() && out >= lo && out <= hi;
}

std::optional<FaultProfile> parseProfile(std::string_view name) {
  FaultProfile p;
  if (name == "reset") {
    p.kind = FaultProfile::Kind::Reset;
    return p;
  }
  if (name == "hang") {
    p.kind = FaultProfile::Kind::Hang;
    return p;
  }
  std::string_view statusText = name;
  if (const auto at = name.find(kRetryAfterInfix); at != std::string_view::npos) {
    statusText = name.substr(0, at);
    long long seconds = 0;
    if (!parseWhole(name.substr(at + kRetryAfterInfix.size()), 0, kMaxRetryAfterSeconds, seconds)) return std::nullopt;
    p.retryAfter = std::to_string(seconds);
  }
  long long status = 0;
  if (!parseWhole(statusText, 100, 599, status)) return std::nullopt;
  if (std::find(std::begin(kStatuses), std::end(kStatuses), status) == std::end(kStatuses)) return std::nullopt;
  p.status = static_cast<int>(status);
  return p;
}

}  // namespace

bool isFaultRoute(std::string_view path) { return path.starts_with(kFaultRoutePrefix); }

std::string_view faultProfileSyntax() {
  return "/faults/<profile>[/op-<id>]/<route>, profile one of 500, 502, 503, 504, 409, 429, "
         "<status>-retry-after-<seconds> (0..86400), reset, hang";
}

std::optional<FaultRoute> parseFaultRoute(std::string_view path, std::string& error) {
  if (!isFaultRoute(path)) {
    error = "not a fault route";
    return std::nullopt;
  }
  std::string_view rest = path.substr(kFaultRoutePrefix.size());
  const auto slash = rest.find('/');
  const std::string_view name = rest.substr(0, slash);
  rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  auto profile = parseProfile(name);
  if (!profile) {
    error = "unknown fault profile '" + std::string(name) + "'; expected " + std::string(faultProfileSyntax());
    return std::nullopt;
  }
  FaultRoute route;
  route.profileName = std::string(name);
  route.profile = *profile;
  if (rest.starts_with("/op-")) {
    const std::string_view after = rest.substr(4);
    const auto end = after.find('/');
    const std::string_view op = after.substr(0, end);
    if (op.empty()) {
      error = "empty operation id in 'op-'; expected " + std::string(faultProfileSyntax());
      return std::nullopt;
    }
    route.operation = std::string(op);
    rest = end == std::string_view::npos ? std::string_view{} : after.substr(end);
  }
  route.rest = rest.empty() ? std::string("/") : std::string(rest);
  return route;
}

}  // namespace idem::faultrig
