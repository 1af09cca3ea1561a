#pragma once
// Fault profiles a real, unmodified client can be pointed at (issue 20): with
// --allow-fault-injection, a request to /faults/<profile>[/op-<id>]/<any route> is never
// executed; the profile decides the answer, and every attempt is recorded (faultlog.h):
//   500 | 502 | 503 | 504 | 409 | 429       that status, at once
//   <status>-retry-after-<seconds>          the same with Retry-After: <seconds>
//   reset                                   the connection is reset (TCP RST) once the request is read
//   hang                                    no answer until the client gives up (or kMaxHang passes)
// The optional op-<id> segment names the operation, so a client that changes its key between
// retries is still seen as one operation; without it, the Idempotency-Key names the operation.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace idem::faultrig {

inline constexpr std::string_view kFaultRoutePrefix = "/faults/";
inline constexpr std::chrono::seconds kMaxHang{300};

struct FaultProfile {
  enum class Kind { Status, Reset, Hang };
  Kind kind = Kind::Status;
  int status = 500;
  std::optional<std::string> retryAfter;  // header value as sent (whole seconds)
};

struct FaultRoute {
  std::string profileName;  // as written in the path
  FaultProfile profile;
  std::optional<std::string> operation;  // op-<id>, without "op-"
  std::string rest;                      // the route after the profile and op segment, "/v1/payments"
};

/// Is this path a fault route at all (the profile may still be malformed)?
[[nodiscard]] bool isFaultRoute(std::string_view path);

/// Parses a fault route; nullopt with `error` set when the profile is unknown or malformed.
[[nodiscard]] std::optional<FaultRoute> parseFaultRoute(std::string_view path, std::string& error);

/// The profiles, for error messages and --help.
[[nodiscard]] std::string_view faultProfileSyntax();

}  // namespace idem::faultrig
