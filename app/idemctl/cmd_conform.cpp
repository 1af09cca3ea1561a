// idemctl conform: the Idempotency-Key contract's scenarios against any HTTP service
// (docs/conformance.md). Exit 0 when none fails, 1 when one does, 2 for bad flags or a service
// that does not answer.
#include <csignal>
#include <iostream>

#include "app/idemctl/command.h"
#include "core/conform/kit.h"
#include "core/conform/render.h"
#include "core/policy/duration.h"

namespace {

namespace cf = idem::conform;
using idemctl::Flag;

constexpr const char* kUsageText =
    "URL [--route 'POST /v1/charges'] [--body JSON] [--header 'Name: value']... [--tenant-header NAME] "
    "[--id-field PATH | --count-url URL] [--slow-header 'Name: value'] [--ttl DURATION] [--only NAME,...] "
    "[--format text|json|markdown] [--list]";

int usage(const std::string& message) { return idemctl::usageError("conform", kUsageText, message); }

// "Name: value" -> {"Name", "value"}; false when there is no name before the colon.
bool parseHeader(const std::string& text, std::pair<std::string, std::string>& out) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  std::string name = text.substr(0, colon);
  if (name.find_first_of(" \t") != std::string::npos) return false;
  std::string value = text.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
  out = {std::move(name), std::move(value)};
  return true;
}

int listScenarios() {
  for (const auto& s : cf::scenarios()) std::cout << s.name << std::string(18 - s.name.size(), ' ') << s.title << '\n';
  return idemctl::kOk;
}

// Fills `o` from the flags; "" when they are all usable, else what is wrong.
std::string readOptions(const idemctl::Args& args, cf::Options& o) {
  const auto& positional = args.positional();
  if (positional.size() != 1) return "give the service's base URL, e.g. http://127.0.0.1:8080";
  o.url = positional[0];
  for (const auto& [flag, target] : {std::pair<const char*, std::optional<cf::Route>*>{"slow-route", &o.slowRoute},
                                     {"expiry-route", &o.expiryRoute}}) {
    if (!args.has(flag)) continue;
    *target = cf::Route::parse(args.get(flag));
    if (!*target) return std::string("--") + flag + ": write a method and a path, e.g. 'POST /v1/charges'";
  }
  if (args.has("route")) {
    auto route = cf::Route::parse(args.get("route"));
    if (!route) return "--route: write a method and a path, e.g. 'POST /v1/charges'";
    o.route = *route;
  }
  if (args.has("body")) o.body = args.get("body");
  o.varyField = args.get("vary-field");
  for (const auto& [flag, target] : {std::pair<const char*, idem::http::Headers*>{"header", &o.headers},
                                     {"slow-header", &o.slowHeaders},
                                     {"cross-key-confirm", &o.crossKeyConfirm}}) {
    for (const auto& text : args.getAll(flag)) {
      std::pair<std::string, std::string> h;
      if (!parseHeader(text, h)) return std::string("--") + flag + ": \"" + text + "\" is not 'Name: value'";
      target->push_back(std::move(h));
    }
  }
  o.tenantHeader = args.get("tenant-header");
  if (args.has("tenants")) {
    const auto names = idemctl::splitList(args.get("tenants"));
    if (names.size() != 2 || names[0] == names[1]) return "--tenants: give two different tenants, e.g. acct_a,acct_b";
    o.tenants[0] = names[0];
    o.tenants[1] = names[1];
  }
  o.idField = args.get("id-field", o.idField);
  o.countUrl = args.get("count-url");
  o.countField = args.get("count-field", o.countField);
  const auto timeout = idem::policy::parseDuration(args.get("timeout", "10s"));
  if (!timeout || timeout->count() == 0) return "--timeout: write a duration such as 10s or 500ms";
  o.timeout = *timeout;
  if (args.has("ttl")) {
    o.ttl = idem::policy::parseDuration(args.get("ttl"));
    if (!o.ttl) return "--ttl: write the service's TTL as a duration such as 2s, 30m or 24h";
  }
  const auto after = args.get("after-expiry", "either");
  if (after == "either") o.afterExpiry = cf::AfterExpiry::Either;
  else if (after == "execute") o.afterExpiry = cf::AfterExpiry::Execute;
  else if (after == "reject") o.afterExpiry = cf::AfterExpiry::Reject;
  else return "--after-expiry: \"" + after + "\" is not execute, reject or either";
  if (args.has("expect-cross-key")) {
    const auto promise = args.get("expect-cross-key");
    if (promise == "off") o.crossKey = cf::CrossKey::Off;
    else if (promise == "observe") o.crossKey = cf::CrossKey::Observe;
    else if (promise == "hold") o.crossKey = cf::CrossKey::Hold;
    else if (promise == "reject") o.crossKey = cf::CrossKey::Reject;
    else return "--expect-cross-key: \"" + promise + "\" is not off, observe, hold or reject";
  }
  if (!o.crossKeyConfirm.empty() && o.crossKey != cf::CrossKey::Hold)
    return "--cross-key-confirm goes with --expect-cross-key hold";
  o.keyHeader = args.get("key-header", o.keyHeader);
  if (o.keyHeader.empty() || o.keyHeader.find_first_of(" :\t") != std::string::npos)
    return "--key-header: a header name, e.g. X-Idempotency-Key";
  if (args.has("max-key-length")) {
    int n = 0;
    if (!idemctl::parseInt(args.get("max-key-length"), 1, 8000, n)) return "--max-key-length: a number from 1 to 8000";
    o.maxKeyLength = static_cast<std::size_t>(n);
  }
  if (args.has("replay-headers")) o.replayHeaders = idemctl::splitList(args.get("replay-headers"));
  o.only = idemctl::splitList(args.get("only"));
  o.skip = idemctl::splitList(args.get("skip"));
  return {};
}

int runConform(const idemctl::Args& args) {
  if (args.has("list")) return listScenarios();
  // A service may close a kept-alive TLS connection at any time; OpenSSL's next write (a close
  // notify) on it must be an error, not SIGPIPE ending the run without a report.
  std::signal(SIGPIPE, SIG_IGN);
  const auto format = idem::text::parseOutputFormat(args.get("format", "text"));
  if (!format) return usage("--format: \"" + args.get("format") + "\" is not text, json or markdown");
  cf::Options options;
  if (auto problem = readOptions(args, options); !problem.empty()) return usage(problem);
  try {
    const auto report = cf::run(options);
    std::cout << cf::render(report, *format);
    return report.passed() ? idemctl::kOk : idemctl::kFailure;
  } catch (const std::invalid_argument& e) {
    return usage(e.what());
  } catch (const cf::Unreachable& e) {
    std::cerr << "idemctl conform: " << e.what() << '\n';
    return idemctl::kUsage;
  }
}

}  // namespace

IDEMCTL_COMMAND(
    "conform", "run the Idempotency-Key contract's scenarios against any HTTP service (pass/fail per scenario)",
    kUsageText,
    {Flag::option("route", "'METHOD /path'", "The route under test: one that creates something and requires a key.",
                  "'POST /v1/charges'"),
     Flag::option("body", "JSON",
                  "The request body; {unique} in it becomes a value new to each scenario and run (put it in a field "
                  "the fingerprint covers when the service detects duplicates across keys).",
                  "{\"amount\":1000,\"currency\":\"usd\"}"),
     Flag::option("vary-field", "NAME", "The body member payload-mismatch changes (a number +1, a string suffixed).",
                  "the body's first member"),
     Flag::option("header", "'Name: value'", "Sent with every request (auth, Content-Type); repeat for more.",
                  "Content-Type: application/json only"),
     Flag::option("tenant-header", "NAME",
                  "How the service tells tenants apart; every request carries the first of --tenants, and "
                  "tenant-scope runs.",
                  "none: tenant-scope is skipped"),
     Flag::option("tenants", "A,B", "The two tenants tenant-scope sends.", "conform-a,conform-b"),
     Flag::option("id-field", "PATH",
                  "Where a 2xx answer names the created resource (id, data.id or /data/id): distinct ids count "
                  "executions.",
                  "id"),
     Flag::option("count-url", "URL|/path",
                  "GET here answers how many times the route executed (a number, or JSON with --count-field); read "
                  "before and after each scenario, it counts instead of ids.",
                  "none: ids count"),
     Flag::option("count-field", "PATH", "The count in --count-url's JSON answer.", "total"),
     Flag::option("slow-route", "'METHOD /path'", "concurrent's route: one slow enough for a second request to overtake.",
                  "--route"),
     Flag::option("slow-header", "'Name: value'",
                  "Sent with concurrent's two requests: a delay header the service honours; repeat for more.", "none"),
     Flag::option("ttl", "DURATION", "The key TTL the service publishes for the expiry route (60s at most is waited out).",
                  "none: expiry is skipped"),
     Flag::option("expiry-route", "'METHOD /path'", "expiry's route, when the main route's TTL is too long to wait.",
                  "--route"),
     Flag::option("after-expiry", "execute|reject|either",
                  "What the service publishes for a key used after its TTL: a new execution or a 4xx.", "either"),
     Flag::option("expect-cross-key", "off|observe|hold|reject",
                  "What the service promises for the same body under a new key; off and observe execute twice, hold "
                  "answers 409, reject a 4xx.",
                  "none: cross-key is informational"),
     Flag::option("cross-key-confirm", "'Name: value'",
                  "With hold: the header that confirms a duplicate on purpose; the held request is sent again with it "
                  "and must execute.",
                  "none"),
     Flag::option("key-header", "NAME", "The header the service reads the key from.", "Idempotency-Key"),
     Flag::option("max-key-length", "N", "The longest key the service accepts; key-malformed sends one character more.",
                  "255"),
     Flag::option("replay-headers", "LIST", "Headers a replay must carry as the first answer had them.",
                  "Content-Type,Content-Language,Location,ETag,Link"),
     Flag::option("only", "NAME,...", "Run only these scenarios (--list names them).", "all"),
     Flag::option("skip", "NAME,...", "Leave these scenarios out.", "none"),
     Flag::option("timeout", "DURATION", "How long each request may take before it counts as unanswered.", "10s"),
     Flag::option("format", "text|json|markdown", "How the report is written.", "text"),
     Flag::toggle("list", "Print the scenarios' names and what each checks, and exit.")},
    runConform);
