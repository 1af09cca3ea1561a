#pragma once
// What `idemctl measure` reads: the attempts a real client made against the endpoint's fault
// profiles (recorded by core/faultrig/faultlog.h), reduced per client (User-Agent) and fault to
// the figures the issue asks for, and the simulator policy they fit (fit.h).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/sim/config.h"

namespace idem::measure {

struct Attempt {
  long long arrivedUs = 0;
  long long endedUs = 0;
  std::string profile;
  std::optional<std::string> operation;  // the route's op-<id>
  std::optional<std::string> key;
  std::string userAgent;
  std::optional<std::string> retryAfter;
};

/// min, median and max of a sample, in seconds (or attempts).
struct Spread {
  double min = 0;
  double p50 = 0;
  double max = 0;
  int samples = 0;
};
[[nodiscard]] Spread spreadOf(std::vector<double> values);

struct RetryStats {
  int retry = 0;  // 1 = the first retry (attempt 2)
  Spread gap;     // arrival to arrival
  Spread sleep;   // the previous attempt's end (answer, reset, client timeout) to this arrival
  Spread offset;  // the first attempt's arrival to this arrival
};

struct FaultReport {
  std::string profile;
  int operations = 0;
  Spread attempts;  // per operation
  std::vector<RetryStats> retries;
  std::optional<bool> sameKey;       // nullopt: cannot tell (no op-<id> in the route, or no retry)
  bool keySent = false;              // any attempt carried an Idempotency-Key
  std::optional<double> retryAfter;  // seconds the profile sent
  std::optional<bool> retryAfterHonoured;
  std::optional<Spread> attemptLength;  // hang: how long the client waited on a first attempt (its timeout)
};

struct ClientReport {
  std::string userAgent;
  std::vector<FaultReport> faults;
  sim::Policy fitted;
  std::vector<std::string> notes;  // what the fit could not see
};

/// The client a User-Agent names, for grouping: each token's comma-separated list sorted.
/// botocore lists the features a call used ("m/E,P,b") in a set's order that changes from one
/// process to the next; the same library with the same features is one client.
[[nodiscard]] std::string clientOf(const std::string& userAgent);

/// Groups attempts by client (clientOf the User-Agent), then profile, then operation (op-<id>, else key, else each
/// attempt alone), and fits a policy per client.
[[nodiscard]] std::vector<ClientReport> analyze(const std::vector<Attempt>& attempts);

[[nodiscard]] nlohmann::ordered_json toJson(const std::vector<ClientReport>& reports);
[[nodiscard]] std::string toText(const std::vector<ClientReport>& reports);

}  // namespace idem::measure
