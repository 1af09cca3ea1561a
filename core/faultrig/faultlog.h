#pragma once
// The attempts recorded on fault routes (idem_demo.fault_attempts, migration 0021). All SQL for
// the table lives here. Only fault routes write it, so normal enforcement never pays for it.
#include <optional>
#include <string>
#include <vector>

#include "core/store/pg.h"

namespace idem::faultrig {

struct FaultAttempt {
  long long arrivedUs = 0;  // epoch microseconds: the request's head was read
  long long endedUs = 0;    // answered, reset, or the client gave up (hang)
  std::string profile;
  std::optional<std::string> operation;
  std::optional<std::string> key;
  std::string userAgent;
  std::string method;
  std::string path;
  std::string outcome;  // "503", "reset", "hang"
  std::optional<std::string> retryAfter;
  std::string remote;
};

void insertFaultAttempt(pg::Connection& conn, const FaultAttempt& a);

/// Whether this database has the table (migration 0021): a store of an older schema, or a
/// database that is not idem_demo's, has none.
[[nodiscard]] bool faultAttemptsTableExists(pg::Connection& conn);

/// Attempts that arrived at or after sinceUs (epoch microseconds), oldest first.
[[nodiscard]] std::vector<FaultAttempt> readFaultAttempts(pg::Connection& conn, long long sinceUs);

}  // namespace idem::faultrig
