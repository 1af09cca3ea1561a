// idemctl proxy: Idem in front of an unchanged HTTP service in any language.
#include <algorithm>
#include <iostream>
#include <map>

#include "app/idemctl/command.h"
#include "app/idemctl/configuration.h"
#include "app/idemctl/server_flags.h"
#include "app/idemctl/start_flags.h"
#include "core/client/client.h"
#include "core/endpoint/server.h"
#include "core/gate/host.h"
#include "core/policy/duration.h"
#include "core/proxy/descriptorbudget.h"
#include "core/proxy/forwarder.h"

namespace {

const std::string kUsageText =
    std::string(
        "--policy FILE --upstream http://HOST:PORT [--db CONNINFO] [--admin-listen HOST:PORT] "
        "[--upstream-timeout DURATION] [--late-answer-wait DURATION] [--upstream-connections N] "
        "[--upstream-connections-per-route N] [--tier-timeout TIER=DURATION[,TIER=DURATION...]] [--store-writes loop|threads] ") +
    idemctl::kServerFlagsUsage + " " + idemctl::kStartFlagsUsage + " [--config FILE]";

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

// "charges=10s,refunds=2m": each tier's own deadline for the upstream's answer.
std::string readTierTimeouts(const std::string& text, const idem::policy::Policy& policy,
                             std::map<std::string, std::chrono::milliseconds>& out) {
  std::size_t at = 0;
  while (at <= text.size()) {
    const auto comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const auto eq = item.find('=');
    const std::string tier = item.substr(0, eq);
    const auto d = eq == std::string::npos ? std::nullopt : idem::policy::parseDuration(item.substr(eq + 1));
    if (!d || d->count() <= 0)
      return "--tier-timeout: \"" + item + "\" is not TIER=DURATION (e.g. charges=10s)";
    const bool known = std::any_of(policy.tiers.begin(), policy.tiers.end(), [&](const auto& t) { return t.name == tier; });
    if (!known) return "--tier-timeout: the policy has no tier named \"" + tier + "\"";
    out[tier] = *d;
    at = comma + 1;
  }
  return {};
}

idemctl::Flags proxyFlags() {
  using F = idemctl::Flag;
  // The defaults shown are the options' own, so the help cannot drift from what runs.
  const idem::proxy::ProxyOptions d;
  const auto duration = [](std::chrono::milliseconds t) { return idem::policy::formatDuration(t); };
  return {
      F::option("policy", "FILE", "The policy (JSON): the routes enforced, their tiers and retention.", "required"),
      F::option("upstream", "http://HOST:PORT", "The service behind the proxy.", "required"),
      idemctl::dbFlag(),
      F::option("admin-listen", "HOST:PORT", "Where /healthz and /metrics answer, apart from client traffic.",
                "127.0.0.1:0"),
      F::option("upstream-timeout", "DURATION", "How long the upstream may take to answer once a request is sent.",
                duration(d.client.timeout)),
      F::option("late-answer-wait", "DURATION",
                "An answer that came too late is still awaited this long in the background (its key stays "
                "leased), then its outcome is recorded as unknown.",
                duration(d.lateAnswerWait)),
      F::option("upstream-connections", "N", "Open connections to the upstream at most (1 to 100000).",
                std::to_string(d.client.maxConnections)),
      F::option("upstream-connections-per-route", "N",
                "In-flight requests per route at most, so one slow route cannot take every connection.",
                "3/4 of --upstream-connections"),
      F::option("tier-timeout", "TIER=DURATION[,...]", "A tier's own --upstream-timeout.", "--upstream-timeout"),
      F::option("store-writes", "loop|threads",
                "How new keys' claims and completions reach the store: from the event loop, waited on by no "
                "thread (batched across requests), or from handler threads that each wait on their request's "
                "statement (as serve does; for comparison, or should the loop's path misbehave).",
                "loop"),
  };
}

// Every setting the proxy reads into its options, at start and again on SIGHUP (reload.h): ""
// when valid, else what is wrong. The policy is checked against --tier-timeout here, so a reload
// that drops a tier the flag names is refused as a start would be.
std::string readProxy(const idemctl::Args& args, idem::endpoint::ServerOptions& options) {
  if (!args.has("policy")) return "--policy is required: the proxy enforces the routes its tiers list";
  if (!args.has("upstream")) return "--upstream is required: the URL of the service behind the proxy";
  options.conninfo = idemctl::conninfo(args);
  const std::string storeWrites = args.get("store-writes", "loop");
  if (storeWrites != "loop" && storeWrites != "threads") return "--store-writes must be loop or threads";
  options.writesWithoutWaiting = storeWrites == "loop";
  try {
    options.policy = idem::policy::loadPolicyFile(args.get("policy"));
  } catch (const idem::policy::PolicyError& e) {
    return e.what();
  }
  if (auto bad = idemctl::readServerFlags(args, options); !bad.empty()) return bad;
  if (auto bad = idemctl::readStartFlags(args, options, "proxy", true); !bad.empty()) return bad;
  const std::string admin = args.get("admin-listen", "127.0.0.1:0");
  if (!idem::client::splitHostPort(admin, options.adminHost, options.adminPort))
    return "--admin-listen: \"" + admin + "\" is not HOST:PORT";

  idem::proxy::ProxyOptions proxy;
  std::string error;
  const auto upstream = idem::proxy::parseUpstreamUrl(args.get("upstream"), error);
  if (!upstream) return "--upstream: " + error;
  proxy.upstream = *upstream;
  if (!readDuration(args, "upstream-timeout", proxy.client.timeout, error) ||
      !readDuration(args, "late-answer-wait", proxy.lateAnswerWait, error))
    return error;
  proxy.client.connectTimeout = std::min(proxy.client.connectTimeout, proxy.client.timeout);
  int upstreamConnections = static_cast<int>(proxy.client.maxConnections);
  if (args.has("upstream-connections") && !idemctl::parseInt(args.get("upstream-connections"), 1, 100000, upstreamConnections))
    return "--upstream-connections must be an integer from 1 to 100000";
  proxy.client.maxConnections = static_cast<std::size_t>(upstreamConnections);
  // One slow route must not take every upstream connection from the others.
  int perRoute = std::max(1, upstreamConnections * 3 / 4);
  if (args.has("upstream-connections-per-route") &&
      !idemctl::parseInt(args.get("upstream-connections-per-route"), 1, upstreamConnections, perRoute))
    return "--upstream-connections-per-route must be an integer from 1 to --upstream-connections (" +
           std::to_string(upstreamConnections) + ")";
  proxy.maxInFlightPerRoute = static_cast<std::size_t>(perRoute);
  if (args.has("tier-timeout"))
    if (auto bad = readTierTimeouts(args.get("tier-timeout"), options.policy, proxy.tierTimeouts); !bad.empty())
      return bad;
  proxy.client.maxIdleConnections = std::min(proxy.client.maxIdleConnections, proxy.client.maxConnections);
  // Late-answer waiters hold an upstream connection each: they can never be more.
  proxy.maxLateAnswers = std::min(proxy.maxLateAnswers, proxy.client.maxConnections);
  // The store's connections: the pool's, and those new keys' writes go on from the loop.
  const auto budget = idem::proxy::planDescriptors(
      {static_cast<std::size_t>(options.poolSize), proxy.client.maxConnections, 64,
       options.writesWithoutWaiting ? static_cast<std::size_t>(idem::gate::Host::kStoreConnectionsWithoutWaiting) : 0});
  if (!budget.refusal.empty()) return budget.refusal;
  if (budget.limit > 0)
    options.maxConnections = static_cast<int>(std::min<std::size_t>(options.maxConnections, budget.clientConnections));
  proxy.trustedHops = options.trustedPeers;  // the gateway's forwarding headers are its word too
  options.execution = [proxy](idem::gate::Host&) -> std::unique_ptr<idem::gate::Execution> {
    return std::make_unique<idem::proxy::Forwarder>(proxy);
  };
  return {};
}

int runProxy(const idemctl::Args& args) {
  namespace ep = idem::endpoint;
  ep::ServerOptions options;
  if (auto bad = readProxy(args, options); !bad.empty()) return usage(bad);
  const std::string upstreamUrl = args.get("upstream");
  return idemctl::runServer(args, std::move(options), "proxy", kUsageText, readProxy, [&upstreamUrl](ep::Server& server) {
    std::cout << "idem proxy listening on " << server.url() << " for upstream " << upstreamUrl << " (admin "
              << server.adminUrl() << ", service " << server.options().service << ", policy version "
              << server.policyVersion() << ")" << std::endl;
    std::cerr << "published policy: " << server.url() << "/idempotency and " << server.adminUrl()
              << "/idempotency (problem types link docs_url " << server.host().policy()->policy.docsUrl
              << "); /healthz and /metrics on " << server.adminUrl()
              << "; reload the policy with SIGHUP; stop with Ctrl-C (SIGINT) or SIGTERM\n";
    idemctl::announcePolicyChoice(server, "proxy");
  });
}

}  // namespace

IDEMCTL_COMMAND("proxy", "enforce the policy in front of an unchanged HTTP service (a reverse proxy)", kUsageText,
                idemctl::withServerFlags(idemctl::withStartFlags(proxyFlags())) + idemctl::Flags{idemctl::configFlag()},
                runProxy);
