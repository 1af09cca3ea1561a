#include "core/faultrig/faultlog.h"

namespace idem::faultrig {

namespace {
pg::Param optional(const std::optional<std::string>& v) { return v ? pg::Param(*v) : pg::Param::null(); }
}  // namespace

void insertFaultAttempt(pg::Connection& conn, const FaultAttempt& a) {
  conn.exec(
      "INSERT INTO idem_demo.fault_attempts (arrived_at, ended_at, profile, operation, idem_key, user_agent, method, "
      "path, outcome, retry_after, remote) VALUES ('epoch'::timestamptz + $1::bigint * interval '1 microsecond', "
      "'epoch'::timestamptz + $2::bigint * interval '1 microsecond', $3, $4, $5, $6, $7, $8, $9, $10, $11)",
      {a.arrivedUs, a.endedUs, a.profile, optional(a.operation), optional(a.key), a.userAgent, a.method, a.path,
       a.outcome, optional(a.retryAfter), a.remote});
}

bool faultAttemptsTableExists(pg::Connection& conn) {
  // to_regclass answers NULL for a missing schema or table instead of failing the statement.
  return conn.exec("SELECT to_regclass('idem_demo.fault_attempts') IS NOT NULL AS present").boolean(0, "present");
}

std::vector<FaultAttempt> readFaultAttempts(pg::Connection& conn, long long sinceUs) {
  const auto r = conn.exec(
      "SELECT (extract(epoch FROM arrived_at) * 1000000)::bigint AS arrived_us, "
      "(extract(epoch FROM ended_at) * 1000000)::bigint AS ended_us, profile, operation, idem_key, user_agent, "
      "method, path, outcome, retry_after, remote FROM idem_demo.fault_attempts "
      "WHERE arrived_at >= 'epoch'::timestamptz + $1::bigint * interval '1 microsecond' ORDER BY arrived_at, id",
      {sinceUs});
  std::vector<FaultAttempt> out;
  out.reserve(static_cast<std::size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    FaultAttempt a;
    a.arrivedUs = r.integer(i, "arrived_us");
    a.endedUs = r.integer(i, "ended_us");
    a.profile = r.str(i, "profile");
    a.operation = r.optStr(i, "operation");
    a.key = r.optStr(i, "idem_key");
    a.userAgent = r.str(i, "user_agent");
    a.method = r.str(i, "method");
    a.path = r.str(i, "path");
    a.outcome = r.str(i, "outcome");
    a.retryAfter = r.optStr(i, "retry_after");
    a.remote = r.str(i, "remote");
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace idem::faultrig
