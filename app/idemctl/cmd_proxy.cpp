// idemctl proxy: Idem in front of an unchanged HTTP service in any language.
#include <iostream>

#include "app/idemctl/command.h"
#include "app/idemctl/server_flags.h"
#include "app/idemctl/start_flags.h"
#include "core/endpoint/client.h"
#include "core/endpoint/server.h"
#include "core/policy/duration.h"
#include "core/proxy/forwarder.h"

namespace {

const std::string kUsageText =
    std::string(
        "--policy FILE --upstream http://HOST:PORT [--db CONNINFO] [--admin-listen HOST:PORT] "
        "[--upstream-timeout DURATION] [--late-answer-wait DURATION] ") +
    idemctl::kServerFlagsUsage + " " + idemctl::kStartFlagsUsage;

int usage(const std::string& message) { return idemctl::usageError("proxy", kUsageText, message); }

bool readDuration(const idemctl::Args& args, const char* name, std::chrono::milliseconds& out, std::string& error) {
  if (!args.has(name)) return true;
  const auto d = idem::policy::parseDuration(args.get(name));
  if (!d || d->count() <= 0) {
    error = std::string("--") + name + " must be a positive duration such as 500ms, 30s or 5m";
    return false;
  }
  out = *d;
  return true;
}

int runProxy(const idemctl::Args& args) {
  namespace ep = idem::endpoint;
  if (!args.has("policy")) return usage("--policy is required: the proxy enforces the routes its tiers list");
  if (!args.has("upstream")) return usage("--upstream is required: the URL of the service behind the proxy");
  ep::ServerOptions options;
  options.conninfo = idemctl::conninfo(args);
  try {
    options.policy = idem::policy::loadPolicyFile(args.get("policy"));
  } catch (const idem::policy::PolicyError& e) {
    return usage(e.what());
  }
  if (auto bad = idemctl::readServerFlags(args, options); !bad.empty()) return usage(bad);
  if (auto bad = idemctl::readStartFlags(args, options, "proxy", true); !bad.empty()) return usage(bad);
  const std::string admin = args.get("admin-listen", "127.0.0.1:0");
  if (!ep::splitHostPort(admin, options.adminHost, options.adminPort))
    return usage("--admin-listen: \"" + admin + "\" is not HOST:PORT");

  idem::proxy::ProxyOptions proxy;
  std::string error;
  const auto upstream = idem::proxy::parseUpstreamUrl(args.get("upstream"), error);
  if (!upstream) return usage("--upstream: " + error);
  proxy.upstream = *upstream;
  if (!readDuration(args, "upstream-timeout", proxy.client.timeout, error) ||
      !readDuration(args, "late-answer-wait", proxy.lateAnswerWait, error))
    return usage(error);
  proxy.client.connectTimeout = std::min(proxy.client.connectTimeout, proxy.client.timeout);
  options.frontHandler = [proxy](ep::Service& service) -> std::unique_ptr<ep::Handler> {
    return std::make_unique<idem::proxy::Forwarder>(service, proxy);
  };

  const std::string upstreamUrl = args.get("upstream");
  return idemctl::runServer(args, std::move(options), "proxy", kUsageText, [&upstreamUrl](ep::Server& server) {
    std::cout << "idem proxy listening on " << server.url() << " for upstream " << upstreamUrl << " (admin "
              << server.adminUrl() << ", policy version " << server.policyVersion() << ")" << std::endl;
    std::cerr << "published policy: " << server.url() << "/idempotency; /healthz and /metrics on " << server.adminUrl()
              << "; stop with Ctrl-C (SIGINT) or SIGTERM\n";
    idemctl::announcePolicyChoice(server, "proxy");
  });
}

}  // namespace

IDEMCTL_COMMAND("proxy", "enforce the policy in front of an unchanged HTTP service (a reverse proxy)", kUsageText,
                idemctl::withServerFlags(idemctl::withStartFlags({"db", "policy", "upstream", "admin-listen",
                                          "upstream-timeout", "late-answer-wait"})),
                runProxy);
