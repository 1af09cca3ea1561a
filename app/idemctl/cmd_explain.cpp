// idemctl explain: what happened to one idempotency key, for a support ticket (docs/design.md §6).
#include <iostream>

#include "app/idemctl/command.h"
#include "core/explain/format.h"
#include "core/explain/loader.h"
#include "core/store/servicename.h"

namespace {

constexpr const char* kUsageText =
    "(--key KEY [--scope \"TENANT METHOD /path\"] [--service NAME] | --resource ID) [--format text|json|markdown] [--audience internal|customer] "
    "[--tz UTC|local|Area/City] [--db CONNINFO]";

int usage(const std::string& message) { return idemctl::usageError("explain", kUsageText, message); }

int runExplain(const idemctl::Args& args) {
  namespace ex = idem::explain;
  const bool byKey = args.has("key");
  const bool byResource = args.has("resource");
  if (byKey == byResource) return usage("give either --key or --resource");
  if (byKey && args.get("key").empty()) return usage("--key needs a value");
  if (byResource && args.get("resource").empty()) return usage("--resource needs a value");
  if (byResource && args.has("scope")) return usage("--scope goes with --key");
  if (byResource && args.has("service")) return usage("--service goes with --key (a resource id names its key)");
  std::optional<std::string> service;
  if (args.has("service")) {
    service = args.get("service");
    if (auto bad = idem::store::serviceNameProblem(*service); !bad.empty()) return usage("--service: " + bad);
  }
  const auto format = idem::text::parseOutputFormat(args.get("format", "text"));
  if (!format) return usage("--format: \"" + args.get("format") + "\" is not text, json or markdown");
  const auto audience = ex::parseAudience(args.get("audience", "internal"));
  if (!audience) return usage("--audience: \"" + args.get("audience") + "\" is not internal or customer");
  const auto zone = idem::text::TimeZone::parse(args.get("tz", "UTC"));
  if (!zone)
    return usage("--tz: \"" + args.get("tz") +
                 "\" is not a time zone; write UTC, local, or a zone of the system's database such as Europe/Paris");
  std::optional<ex::Scope> scope;
  if (args.has("scope")) {
    scope = ex::Scope::parse(args.get("scope"));
    if (!scope)
      return usage("--scope: \"" + args.get("scope") +
                   "\" is not a scope; write the tenant, the method and the route, e.g. \"acct_42 POST /v1/payments\" "
                   "(without a tenant: \"POST /v1/payments\")");
  }

  try {
    idem::pg::Connection conn(idemctl::conninfo(args));
    auto history = byKey ? ex::loadByKey(conn, args.get("key"), scope, service)
                         : ex::loadByResource(conn, args.get("resource"));
    std::cout << ex::render(ex::explain(std::move(history), ex::ExplainOptions{*zone}), *format, *audience);
    return idemctl::kOk;
  } catch (const ex::NotFound& e) {
    std::cerr << "idemctl explain: " << e.what() << '\n';
    return idemctl::kFailure;
  } catch (const ex::Ambiguous& e) {
    std::cerr << "idemctl explain: " << e.what() << '\n';
    return idemctl::kUsage;
  } catch (const idem::pg::Unavailable& e) {
    std::cerr << "idemctl explain: " << e.what() << "\nCheck --db or the PG* variables.\n";
    return idemctl::kUnavailable;
  }
}

}  // namespace

IDEMCTL_COMMAND("explain", "tell what happened to one idempotency key (text, JSON or Markdown)", kUsageText,
                {idemctl::Flag::option("key", "KEY", "The Idempotency-Key to explain (or --resource).", "required"),
                 idemctl::Flag::option("scope", "\"TENANT METHOD /path\"",
                                       "Which key when several tenants or routes used the same one.",
                                       "the only one; several are refused with their scopes"),
                 idemctl::Flag::option("service", "NAME",
                                       "Whose key, when several services share the store and hold it.",
                                       "the only service that holds it; several are refused with their names"),
                 idemctl::Flag::option("resource", "ID", "Explain the key that created this resource (or --key).",
                                       "required unless --key"),
                 idemctl::Flag::option("format", "text|json|markdown", "How the story is written.", "text"),
                 idemctl::Flag::option("audience", "internal|customer",
                                       "customer leaves out internal detail, for a reply to a ticket.", "internal"),
                 idemctl::Flag::option("tz", "UTC|local|Area/City", "The time zone the times are written in.", "UTC"),
                 idemctl::dbFlag()},
                runExplain);
