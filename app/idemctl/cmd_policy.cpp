// idemctl policy: which recorded policy is in force (for the sweeper, the console and `idemctl
// tiers`). Enforcers record the policy they run with; only the admin or the schema's owner
// chooses which one is followed (docs/store.md, "Roles").
#include <ctime>
#include <iostream>

#include "app/idemctl/command.h"
#include "app/idemctl/start_flags.h"
#include "core/store/policystore.h"
#include "core/store/sweeper.h"

namespace {

constexpr const char* kUsageText = "list | activate VERSION|FILE [--service NAME] [--db CONNINFO] [--lock-timeout 10s]";

std::string utc(long long ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", std::gmtime(&t));
  return buf;
}

int list(idem::pg::Connection& conn) {
  const auto services = idem::store::servicesWithChoice(conn);
  if (services.empty()) std::cout << "no policy chosen yet (idemctl policy activate VERSION|FILE)\n";
  for (const auto& service : services) {
    const auto choices = idem::store::policyChoices(conn, service, 10);
    std::cout << "service " << service << ":\n";
    bool inForce = false;
    for (const auto& choice : choices) {
      std::string label = inForce ? "  before:   " : "  in force: ";
      if (!inForce) {
        try {  // the same test the sweeper applies: one it cannot follow is passed over
          (void)idem::store::retentionsFromPolicy(choice.document, "version " + std::to_string(choice.version));
          inForce = true;
        } catch (const idem::store::RetentionError& e) {
          label = std::string("  skipped (") + e.what() + "): ";
        }
      }
      std::cout << label << "version " << choice.version << " (" << choice.source << "), chosen "
                << utc(choice.chosenAtMs) << " by " << choice.chosenBy << '\n';
    }
  }
  auto r = conn.exec(
      "SELECT version, source, (extract(epoch FROM effective_at) * 1000)::bigint AS ms "
      "FROM idem.policies ORDER BY version DESC LIMIT 20");
  std::cout << "recorded (newest first):\n";
  for (int i = 0; i < r.rows(); ++i)
    std::cout << "  version " << r.str(i, "version") << " (" << r.str(i, "source") << "), recorded "
              << utc(r.integer(i, "ms")) << '\n';
  return idemctl::kOk;
}

int activate(idem::pg::Connection& conn, const std::string& what, const std::string& service,
             std::chrono::milliseconds lockTimeout) {
  int version = 0;
  if (idemctl::parseInt(what, 1, 1 << 30, version)) {
    idem::store::activatePolicyVersion(conn, version, service, lockTimeout);
  } else {
    version = idem::store::activatePolicy(conn, idem::policy::loadPolicyFile(what), service, lockTimeout);
  }
  std::cout << "policy version " << version << " is in force for service " << service
            << " (the sweeper follows it from its next round)\n";
  return idemctl::kOk;
}

int runPolicy(const idemctl::Args& args) {
  const auto& pos = args.positional();
  const std::string sub = pos.empty() ? "" : pos[0];
  if (sub != "list" && !(sub == "activate" && pos.size() == 2))
    return idemctl::usageError("policy", kUsageText, "say list, or activate and a version or a policy file");
  std::chrono::milliseconds lockTimeout = idem::store::kDefaultLockTimeout;
  if (auto bad = idemctl::readLockTimeout(args, lockTimeout); !bad.empty())
    return idemctl::usageError("policy", kUsageText, bad);
  // A typo would choose a policy for a service that never runs: refused like serve's --service.
  if (auto bad = idem::store::serviceNameProblem(args.get("service", idem::store::kDefaultService)); !bad.empty())
    return idemctl::usageError("policy", kUsageText, "--service: " + bad);
  try {
    idem::pg::Connection conn(idemctl::conninfo(args));
    if (sub == "list") return list(conn);
    return activate(conn, pos[1], args.get("service", idem::store::kDefaultService), lockTimeout);
  } catch (const idem::pg::Unavailable& e) {
    std::cerr << "idemctl policy: " << e.what() << "\nCheck --db or the PG* variables.\n";
    return idemctl::kUnavailable;
  } catch (const idem::policy::PolicyError& e) {
    std::cerr << "idemctl policy: " << e.what() << '\n';
    return idemctl::kUsage;
  } catch (const idem::store::RetentionError& e) {
    std::cerr << "idemctl policy: " << e.what() << '\n';
    return idemctl::kUsage;
  } catch (const idem::store::LockWaitTimeout& e) {
    std::cerr << "idemctl policy: " << e.what() << '\n';
    return idemctl::kFailure;
  } catch (const idem::pg::QueryError& e) {
    std::cerr << "idemctl policy: " << e.what()
              << (e.sqlstate() == "42501" ? "\nChoosing the policy in force takes the admin (a member of idem_admin) "
                                            "or the schema's owner; the service role may not."
                                          : "")
              << '\n';
    return idemctl::kFailure;
  }
}

}  // namespace

IDEMCTL_COMMAND("policy", "list recorded policies and choose the one in force (admin or owner)", kUsageText,
                {idemctl::Flag::option("service", "NAME", "The service whose policy in force `activate` sets.",
                                       idem::store::kDefaultService),
                 idemctl::dbFlag(), idemctl::lockTimeoutFlag()},
                runPolicy);
