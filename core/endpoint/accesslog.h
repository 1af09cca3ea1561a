#pragma once
// One structured (JSON) log line per request, for people grepping and for log shippers.
#include <string>

namespace idem::endpoint {

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
  double latencyMs = 0;
  std::string remote;
};

/// The record as one line of JSON, newline-terminated. Empty fields are left out.
[[nodiscard]] std::string formatLogLine(const LogRecord& r);

}  // namespace idem::endpoint
