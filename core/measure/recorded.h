#pragma once
// Where the figures come from: the attempts the endpoint recorded on its fault routes
// (idem_demo.fault_attempts, read through core/faultrig/faultlog.h), from an optional "since".
// `idemctl measure` and the console's Measure view both read through here, so the same store
// and the same window give the same figures in both.
#include <optional>
#include <string>
#include <vector>

#include "core/measure/attempts.h"
#include "core/store/pg.h"

namespace idem::measure {

/// A window start in epoch microseconds from "15m" / "2h" (that long before the database's
/// now(), the one clock: docs/design.md §3) or a timestamp PostgreSQL reads ("2026-12-04 20:00Z").
/// Empty text: everything (0). nullopt: the text is neither.
[[nodiscard]] std::optional<long long> resolveSince(pg::Connection& conn, const std::string& since);

struct Measurement {
  /// The store has no idem_demo.fault_attempts: an older schema (before migration 0021), or a
  /// database that is not idem_demo's. Nothing else is filled.
  bool tableMissing = false;
  std::size_t attempts = 0;  // rows read
  std::vector<ClientReport> clients;
};

/// The recorded attempts that arrived at or after sinceUs, as analyze() takes them.
[[nodiscard]] std::vector<Attempt> readRecordedAttempts(pg::Connection& conn, long long sinceUs);

/// Reads the attempts at or after sinceUs and analyses them per client and fault.
[[nodiscard]] Measurement measureRecorded(pg::Connection& conn, long long sinceUs);

}  // namespace idem::measure
