// idemctl measure: what real clients did against `idemctl serve --allow-fault-injection`'s fault
// profiles (/faults/<profile>/...), per client (User-Agent) and fault, and the simulator policy
// each fits (issue 20). Reads idem_demo.fault_attempts (migration 0021).
#include <chrono>
#include <iostream>

#include "app/idemctl/command.h"
#include "core/endpoint/faultlog.h"
#include "core/measure/attempts.h"
#include "core/sim/duration.h"
#include "core/store/pg.h"

namespace {

const std::string kUsageText =
    "[--db CONNINFO] [--since DURATION|TIMESTAMP] [--format text|json]\n"
    "--since: attempts that arrived within the last DURATION (\"15m\", \"2h\") or at/after a timestamp\n"
    "(\"2026-12-04 20:00Z\"); default: all. The json form's fitted_policy loads as a simulator policy.";

int usage(const std::string& message) { return idemctl::usageError("measure", kUsageText, message); }

long long nowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

idem::measure::Attempt toMeasured(const idem::endpoint::FaultAttempt& a) {
  return {a.arrivedUs, a.endedUs, a.profile, a.operation, a.key, a.userAgent, a.retryAfter};
}

int runMeasure(const idemctl::Args& args) {
  if (!args.positional().empty()) return usage("unexpected argument '" + args.positional().front() + "'");
  const std::string format = args.get("format", "text");
  if (format != "text" && format != "json") return usage("--format must be text or json");
  try {
    idem::pg::Connection conn(idemctl::conninfo(args));
    long long sinceUs = 0;
    if (args.has("since")) {
      const std::string since = args.get("since");
      if (const auto d = idem::sim::parseDuration(since)) {
        sinceUs = nowUs() - *d;
      } else {
        try {
          sinceUs = conn.exec("SELECT (extract(epoch FROM $1::timestamptz) * 1000000)::bigint AS us", {since})
                        .integer(0, "us");
        } catch (const idem::pg::QueryError&) {
          return usage("--since must be a duration (\"15m\", \"2h\") or a timestamp (\"2026-12-04 20:00Z\"), not '" +
                       since + "'");
        }
      }
    }
    std::vector<idem::measure::Attempt> attempts;
    for (const auto& a : idem::endpoint::readFaultAttempts(conn, sinceUs)) attempts.push_back(toMeasured(a));
    const auto reports = idem::measure::analyze(attempts);
    if (format == "json") {
      std::cout << idem::measure::toJson(reports).dump(2) << '\n';
    } else {
      std::cout << idem::measure::toText(reports);
    }
    return idemctl::kOk;
  } catch (const idem::pg::Unavailable& e) {
    std::cerr << "idemctl measure: " << e.what() << "\nCheck --db or the PG* variables.\n";
    return idemctl::kUnavailable;
  } catch (const idem::pg::QueryError& e) {
    std::cerr << "idemctl measure: " << e.what() << "\nIs the store migrated (idemctl migrate)?\n";
    return idemctl::kFailure;
  }
}

}  // namespace

IDEMCTL_COMMAND("measure", "per client and fault: retries seen on fault routes, and the simulator policy they fit",
                kUsageText, {"db", "since", "format"}, runMeasure);
