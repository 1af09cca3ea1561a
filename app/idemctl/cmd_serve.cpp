// idemctl serve: the embedded test endpoint (docs/design.md §5) over a migrated store.
#include <iostream>

#include "app/idemctl/command.h"
#include "app/idemctl/configuration.h"
#include "app/idemctl/server_flags.h"
#include "app/idemctl/start_flags.h"
#include "core/client/client.h"
#include "core/endpoint/server.h"
#include "core/faultrig/faultrig.h"
#include "core/store/migrations.h"
#include "resources/embedded_resources.h"

namespace {

const std::string kUsageText =
    std::string("[--db CONNINFO] [--policy FILE] [--allow-fault-injection] [--admin-listen HOST:PORT] ") +
    idemctl::kServerFlagsUsage + " " + idemctl::kStartFlagsUsage + " [--config FILE]";

int usage(const std::string& message) { return idemctl::usageError("serve", kUsageText, message); }

// serve's API writes the demo's ledger (and its fault routes their attempts), which a store
// migrated without --demo does not have: refused here, naming the fix, rather than a 500 on every
// payment. Not created here: serve may run as idem_service, which makes no DDL, and a schema
// change is the operator's act. A store it cannot reach is the server's to report.
std::string demoTablesMissing(const std::string& conninfo, bool faultAttempts) {
  std::vector<std::string> missing;
  try {
    idem::pg::Connection conn(conninfo);
    missing = idem::store::missingDemoTables(conn, faultAttempts);
  } catch (const idem::pg::Error&) {
    return {};
  }
  if (missing.empty()) return {};
  std::string names;
  for (const auto& table : missing) names += (names.empty() ? "" : " and ") + table;
  return "this store has no " + names +
         ", the demo tables serve's API writes to; run `idemctl migrate --demo` with the same --db first (a store "
         "behind `idemctl proxy` needs none)";
}

// Every setting serve reads into its options, at start and again on SIGHUP (reload.h): "" when
// valid, else what is wrong.
std::string readServe(const idemctl::Args& args, idem::endpoint::ServerOptions& options) {
  options.conninfo = idemctl::conninfo(args);
  options.allowFaultInjection = args.has("allow-fault-injection");
  if (options.allowFaultInjection) options.rawRoute = idem::faultrig::makeFaultRig;  // the /faults/... routes
  try {
    options.policy = args.has("policy") ? idem::policy::loadPolicyFile(args.get("policy"))
                                        : idem::policy::parsePolicy(*idem::resources::find("policy/demo-policy.json"),
                                                                    "demo-policy.json");
  } catch (const idem::policy::PolicyError& e) {
    return e.what();
  }
  if (auto bad = idemctl::readServerFlags(args, options); !bad.empty()) return bad;
  if (auto bad = idemctl::readStartFlags(args, options, "serve", false); !bad.empty()) return bad;
  // An admin listener (/healthz, /metrics) with its own threads and connection budget: off
  // unless asked for, since serve's own port answers both too.
  if (args.has("admin-listen") && !idem::client::splitHostPort(args.get("admin-listen"), options.adminHost, options.adminPort))
    return "--admin-listen: \"" + args.get("admin-listen") + "\" is not HOST:PORT";
  return {};
}

int runServe(const idemctl::Args& args) {
  namespace ep = idem::endpoint;
  ep::ServerOptions options;
  if (auto bad = readServe(args, options); !bad.empty()) return usage(bad);
  if (!args.has("policy")) std::cerr << "idemctl serve: no --policy given; using the built-in demo policy\n";
  const bool faults = args.has("allow-fault-injection");
  if (auto missing = demoTablesMissing(options.conninfo, faults); !missing.empty()) {
    std::cerr << "idemctl serve: " << missing << '\n';
    return idemctl::kUsage;
  }
  return idemctl::runServer(args, std::move(options), "serve", kUsageText, readServe, [faults](ep::Server& server) {
    std::cout << "idem endpoint listening on " << server.url() << " (service " << server.options().service
              << ", policy version " << server.policyVersion()
              << (faults ? ", fault injection on" : "")
              << (server.adminPort() ? ", admin " + server.adminUrl() : std::string()) << ")" << std::endl;
    std::cerr << "published policy: " << server.url()
              << "/idempotency; reload the policy with SIGHUP; stop with Ctrl-C (SIGINT) or SIGTERM\n";
    idemctl::announcePolicyChoice(server, "serve");
  });
}

}  // namespace

IDEMCTL_COMMAND("serve", "run the embedded test endpoint (payments, refunds, orders) over the store", kUsageText,
                idemctl::withServerFlags(idemctl::withStartFlags(
                    {idemctl::dbFlag(),
                     idemctl::Flag::option("policy", "FILE", "The policy (JSON) the endpoint enforces.",
                                           "the built-in demo policy"),
                     idemctl::Flag::toggle("allow-fault-injection",
                                           "Answer the fault routes (500, 503, resets, hangs) that tests and the "
                                           "simulator's measurements drive."),
                     idemctl::Flag::option("admin-listen", "HOST:PORT",
                                           "A second listener for /healthz and /metrics with its own budget.",
                                           "none: the main port answers both")})) +
                    idemctl::Flags{idemctl::configFlag()},
                runServe);
