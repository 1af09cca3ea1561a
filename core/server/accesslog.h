#pragma once
// One structured (JSON) log line per request, for people grepping and for log shippers.
#include <string>
#include <string_view>

namespace idem::server {

struct LogRecord {
  long long atMs = 0;  // wall clock, epoch milliseconds
  std::string requestId;
  std::string method;
  std::string path;
  int status = 0;
  std::string tier;
  std::string outcome;
  std::string tenant;
  std::string key;  // the parsed key, when the request carried a valid one
  int generation = 0;
  bool replayed = false;
  std::string resource;  // id of the resource created, if any
  std::string would;     // observe: the decision that was not enforced (key_missing, replayed, ...)
  std::string detail;    // why a refusal was decided so (the store's error, a bound): the operator's only
  double latencyMs = 0;
  std::string remote;
};

/// The record as one line of JSON, newline-terminated. Empty fields are left out.
[[nodiscard]] std::string formatLogLine(const LogRecord& r);

/// What went wrong inside the endpoint, for the operator: one JSON line on stderr
/// ({"ts", "level":"error", "request_id", "during", "error"}), under the request id the client
/// was given. `error` may be a store's or library's message; clients never see it.
void logInternalError(std::string_view requestId, std::string_view during, std::string_view error);

}  // namespace idem::server
