#include "app/idemctl/start_flags.h"

#include <iostream>

#include "core/gate/trustedpeers.h"
#include "core/policy/duration.h"
#include "core/policy/tenantsource.h"

namespace idemctl {

const char* const kStartFlagsUsage =
    "[--lock-timeout DURATION] [--tenant-header NAME [--trusted-peers CIDR,...|any] | --tenant-from-authorization | "
    "--single-tenant] [--accept-tenant-change]";

Flag lockTimeoutFlag() {
  return Flag::option("lock-timeout", "DURATION",
                      "The longest wait for the store's locks at start; past it the command fails naming the holder.",
                      idem::policy::formatDuration(idem::endpoint::ServerOptions{}.lockTimeout));
}

Flags withStartFlags(Flags own) {
  using F = Flag;
  return std::move(own) +
         Flags{
             lockTimeoutFlag(),
             F::option("tenant-header", "NAME",
                       "Tenants come from this request header, set by a gateway in front (add --trusted-peers).",
                       "the policy's tenant_header"),
             F::toggle("tenant-from-authorization",
                       "Tenants are a digest of each request's Authorization header: different credentials never "
                       "share keys."),
             F::toggle("single-tenant",
                       "One key space for every client (one client, or clients that may see each "
                       "other's answers)."),
             F::option("trusted-peers", "CIDR,...|any", "The tenant header is accepted only from these addresses.",
                       "any peer; the proxy refuses a --listen beyond loopback without it"),
             F::toggle("accept-tenant-change", "Start although live keys were written under another tenant source."),
         };
}

std::string readLockTimeout(const Args& args, std::chrono::milliseconds& out) {
  if (!args.has("lock-timeout")) return {};
  const auto d = idem::policy::parseDuration(args.get("lock-timeout"));
  if (!d || d->count() <= 0) return "--lock-timeout must be a positive duration such as 10s or 2m";
  out = *d;
  return {};
}

namespace {

constexpr const char* kTenantChoices =
    "Choose one: --tenant-header NAME (a gateway in front authenticates the client and sets it; add "
    "--trusted-peers with the gateway's address), --tenant-from-authorization (a digest of each request's "
    "Authorization header: different credentials never share keys; no gateway needed), or --single-tenant "
    "(one client, or clients that may see each other's answers) — or the policy's tenant_header, "
    "tenant_from_authorization or single_tenant";


std::string readTenantSource(const Args& args, idem::policy::Policy& policy) {
  namespace pol = idem::policy;
  const int given = args.has("tenant-header") + args.has("tenant-from-authorization") + args.has("single-tenant");
  if (given > 1) return "--tenant-header, --tenant-from-authorization and --single-tenant are alternatives; give one";
  if (args.has("tenant-header")) {
    const std::string name = args.get("tenant-header");
    if (name.empty() || name.find_first_of(" \t:") != std::string::npos)
      return "--tenant-header must be a header name such as X-Tenant-Id";
    pol::setTenantSource(policy, pol::TenantSourceKind::Header, name);
  } else if (args.has("tenant-from-authorization")) {
    pol::setTenantSource(policy, pol::TenantSourceKind::Authorization);
  } else if (args.has("single-tenant")) {
    pol::setTenantSource(policy, pol::TenantSourceKind::Single);
  }
  return {};
}

}  // namespace

std::string readStartFlags(const Args& args, idem::endpoint::ServerOptions& options, std::string_view command,
                           bool requireSource) {
  if (auto bad = readLockTimeout(args, options.lockTimeout); !bad.empty()) return bad;
  if (auto bad = readTenantSource(args, options.policy); !bad.empty()) return bad;
  options.acceptTenantChange = args.has("accept-tenant-change");
  const auto& policy = options.policy;
  if (requireSource && policy.tenantSource().empty())
    return "no tenant source: every client would share one key space, so one client's key replays another's "
           "answer (Bearer bob would get Bearer alice's). " +
           std::string(kTenantChoices) + ".";
  const bool gatewayHeader = !policy.tenantHeader.empty() && !policy.tenantFromAuthorization;
  if (args.has("trusted-peers")) {
    if (!gatewayHeader) return "--trusted-peers needs a tenant header (--tenant-header or the policy's tenant_header)";
    options.trustedPeers = splitList(args.get("trusted-peers"));
    std::string error;
    if (!idem::gate::TrustedPeers::parse(options.trustedPeers, error) || options.trustedPeers.empty())
      return "--trusted-peers: " + (error.empty() ? std::string("give at least one address or range") : error);
  }
  // Reachable beyond this machine, anyone may name any tenant unless only the gateway is trusted.
  if (gatewayHeader && options.trustedPeers.empty() && !idem::gate::isLoopbackHost(options.host)) {
    const std::string risk = "listening on " + options.host + " with tenants from the " + policy.tenantHeader +
                             " header and no --trusted-peers: any client that reaches this address can name any "
                             "tenant and read its stored answers";
    if (requireSource)
      return risk + ". Pass --trusted-peers with the gateway's address (or --trusted-peers any to accept the risk).";
    std::cerr << "idemctl " << command << ": WARNING: " << risk << " (pass --trusted-peers)\n";
  }
  return {};
}

void announcePolicyChoice(const idem::endpoint::Server& server, std::string_view command) {
  const int recorded = server.policyVersion();
  const int inForce = server.policyInForce();
  if (inForce == recorded) return;
  const std::string& service = server.options().service;
  const bool named = service != idem::store::kDefaultService;
  std::cerr << "idemctl " << command << ": enforcing policy version " << recorded
            << (named ? " for service " + service : std::string()) << "; the sweeper and the console follow "
            << (inForce ? "version " + std::to_string(inForce) : std::string("no chosen policy (built-in retentions)"))
            << ". To make this one the policy in force, the admin runs: idemctl policy activate " << recorded
            << (named ? " --service " + service : std::string()) << '\n';
}

}  // namespace idemctl
