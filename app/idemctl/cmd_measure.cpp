// idemctl measure: what real clients did against `idemctl serve --allow-fault-injection`'s fault
// profiles (/faults/<profile>/...), per client (User-Agent) and fault, and the simulator policy
// each fits (issue 20). Reads idem_demo.fault_attempts (migration 0021).
#include <iostream>

#include "app/idemctl/command.h"
#include "core/measure/attempts.h"
#include "core/measure/recorded.h"
#include "core/store/pg.h"

namespace {

const std::string kUsageText =
    "[--db CONNINFO] [--since DURATION|TIMESTAMP] [--format text|json]\n"
    "--since: attempts that arrived within the last DURATION (\"15m\", \"2h\", by the database's clock) or\n"
    "at/after a timestamp (\"2026-12-04 20:00Z\"); default: all. The json form's fitted_policy loads as a simulator "
    "policy.";

int usage(const std::string& message) { return idemctl::usageError("measure", kUsageText, message); }

int runMeasure(const idemctl::Args& args) {
  if (!args.positional().empty()) return usage("unexpected argument '" + args.positional().front() + "'");
  const std::string format = args.get("format", "text");
  if (format != "text" && format != "json") return usage("--format must be text or json");
  try {
    idem::pg::Connection conn(idemctl::conninfo(args));
    const std::string since = args.has("since") ? args.get("since") : std::string();
    const auto sinceUs = idem::measure::resolveSince(conn, since);
    if (!sinceUs)
      return usage("--since must be a duration (\"15m\", \"2h\") or a timestamp (\"2026-12-04 20:00Z\"), not '" +
                   since + "'");
    const auto measured = idem::measure::measureRecorded(conn, *sinceUs);
    if (measured.tableMissing) {
      std::cerr << "idemctl measure: this database has no idem_demo.fault_attempts (a demo table, which "
                   "idemctl migrate --demo adds).\n"
                   "Point --db at the store idemctl serve --allow-fault-injection writes to, migrated "
                   "(idemctl migrate --demo).\n";
      return idemctl::kFailure;
    }
    const auto& reports = measured.clients;
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
                kUsageText,
                {idemctl::dbFlag(),
                 idemctl::Flag::option("since", "DURATION|TIMESTAMP",
                                       "Attempts within the last DURATION (15m, 2h) or at/after a timestamp.", "all"),
                 idemctl::Flag::option("format", "text|json", "json's fitted_policy loads as a simulator policy.",
                                       "text")},
                runMeasure);
