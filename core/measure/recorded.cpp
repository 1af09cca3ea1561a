#include "core/measure/recorded.h"

#include "core/faultrig/faultlog.h"
#include "core/sim/duration.h"

namespace idem::measure {

std::optional<long long> resolveSince(pg::Connection& conn, const std::string& since) {
  if (since.empty()) return 0;
  if (const auto d = sim::parseDuration(since))
    return conn
        .exec("SELECT (extract(epoch FROM now()) * 1000000)::bigint - $1::bigint AS us", {static_cast<long long>(*d)})
        .integer(0, "us");
  try {
    return conn.exec("SELECT (extract(epoch FROM $1::timestamptz) * 1000000)::bigint AS us", {since}).integer(0, "us");
  } catch (const pg::QueryError& e) {
    // Class 22 (data exception: not a timestamp, out of range) is the text's fault; anything
    // else (a lost connection, a cancel) is the caller's to report.
    if (e.sqlstate().rfind("22", 0) == 0) return std::nullopt;
    throw;
  }
}

std::vector<Attempt> readRecordedAttempts(pg::Connection& conn, long long sinceUs) {
  std::vector<Attempt> out;
  for (auto& a : faultrig::readFaultAttempts(conn, sinceUs))
    out.push_back({a.arrivedUs, a.endedUs, std::move(a.profile), std::move(a.operation), std::move(a.key),
                   std::move(a.userAgent), std::move(a.retryAfter)});
  return out;
}

Measurement measureRecorded(pg::Connection& conn, long long sinceUs) {
  Measurement m;
  if (!faultrig::faultAttemptsTableExists(conn)) {
    m.tableMissing = true;
    return m;
  }
  const auto attempts = readRecordedAttempts(conn, sinceUs);
  m.attempts = attempts.size();
  m.clients = analyze(attempts);
  return m;
}

}  // namespace idem::measure
