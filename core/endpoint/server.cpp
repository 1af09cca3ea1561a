#include "core/endpoint/server.h"

#include <iostream>

#include "core/endpoint/service.h"
#include "core/gate/admin.h"
#include "core/gate/gate.h"
#include "core/store/migrations.h"
#include "core/store/policystore.h"
#include "core/store/serviceregistry.h"
#include "core/store/tenantscope.h"

namespace idem::endpoint {

Server::Server(ServerOptions options)
    // 0. Limits the transport can honour (it normalises the body budget).
    : m_options(std::move(options)), m_transport(std::make_unique<server::Transport>(m_options)) {
  static_cast<server::TransportOptions&>(m_options) = m_transport->options();

  // 1. The store: reachable, migrated to this build's schema; record the policy in force.
  if (auto bad = store::serviceNameProblem(m_options.service); !bad.empty()) throw StartError("--service: " + bad, 2);
  try {
    pg::Connection conn(m_options.conninfo);
    const int applied = store::appliedSchemaVersion(conn);
    const int expected = store::expectedSchemaVersion();
    if (applied < expected)
      throw StartError("the store's schema is at version " + std::to_string(applied) + " but this idemctl needs " +
                           std::to_string(expected) + ". Run `idemctl migrate --db \"...\"` with the same --db first.",
                       2);
    if (!m_options.acceptTenantChange)
      if (auto change = store::tenantScopeChange(conn, m_options.policy, m_options.service))
        throw StartError(store::describe(*change), 2);
    m_policyVersion = recordPolicy(conn, m_options.policy);
  } catch (const store::LockWaitTimeout& e) {
    throw StartError(std::string("cannot record the policy: ") + e.what(), 3);
  } catch (const pg::Unavailable& e) {
    throw StartError(std::string("cannot reach the store: ") + e.what() + " Check --db or the PG* variables.", 3);
  }

  // 2. The sockets: bound now so the ports (0 = any) are known before the first request.
  m_transport->listen();

  // 3. The host, the execution (the proxy's upstream call, or serve's demo API: never both)
  // and the gate in front of it.
  m_host = std::make_unique<gate::Host>(
      m_options.conninfo, published(m_options.policy), m_policyVersion,
      gate::HostOptions{m_options.poolSize, m_options.traceFlushInterval, m_options.traceFoldAfter,
                        m_options.preparedStatements, m_options.replayCache, m_options.service,
                        m_options.replayBodies, m_options.conflictWaits, m_options.writeBatching});
  m_execution = m_options.execution ? m_options.execution(*m_host)
                                    : std::make_unique<Service>(*m_host, m_options.allowFaultInjection);
  m_host->setTakeoverDefault(m_execution->takeoverDefault());
  // An execution on the event loop parks no thread on the store either: new keys' writes go
  // without waiting (the proxy). Serve's demo API blocks on its own statements anyway.
  const bool onLoop = m_options.writesWithoutWaiting && m_execution->thread() == gate::Execution::Thread::Loop;
  if (onLoop) m_host->writeWithoutWaiting();
  m_host->metrics().attachTransport(&m_transport->stats());
  gate::GateOptions gateOptions;
  gateOptions.pagesOnMain = !m_options.execution;
  if (!m_options.trustedPeers.empty()) {
    std::string error;
    auto peers = gate::TrustedPeers::parse(m_options.trustedPeers, error);
    if (!peers) throw StartError("--trusted-peers: " + error, 2);
    gateOptions.trustedPeers = std::move(*peers);
  }
  m_gate = std::make_unique<gate::Gate>(*m_host, *m_execution, std::move(gateOptions));
  const std::string docsUrl = m_host->policy()->policy.docsUrl;
  if (m_options.rawRoute) m_rawRoute = m_options.rawRoute(m_host->pool(), docsUrl);
  if (m_options.adminPort >= 0) m_admin = std::make_unique<gate::AdminHandler>(*m_host, m_gate.get());
  m_transport->attach(
      server::Handlers{*m_gate, m_admin.get(), m_rawRoute.get(), docsUrl,
                       m_options.poolSize + (onLoop ? gate::Host::kStoreConnectionsWithoutWaiting : 0)});
}

Server::~Server() {
  try {
    stop();
    wait();
  } catch (const std::exception& e) {  // a destructor must not throw (a join that failed)
    std::cerr << "idem endpoint: stopping the server failed: " << e.what() << '\n';
  }
}

std::string Server::url() const { return m_transport->url(); }

int Server::recordPolicy(pg::Connection& conn, const policy::Policy& p) {
  const int version = store::recordPolicy(conn, p, m_options.lockTimeout, m_options.service);
  store::registerService(conn, m_options.service, version);
  const auto chosen = store::policyChoices(conn, m_options.service, 1);
  m_policyInForce = chosen.empty() ? 0 : chosen.front().version;
  return version;
}

policy::Policy Server::published(policy::Policy p) const {
  // Problem types link the operator's docs_url (where clients can open it); only a policy
  // without one gets this server's own published page.
  if (p.docsUrl.empty()) p.docsUrl = url() + "/idempotency";
  return p;
}

PolicyReload Server::reloadPolicy(policy::Policy next) {
  const std::lock_guard lock(m_reloading);
  const enforce::PolicyPtr current = m_host->policy();
  PolicyReload r;
  r.version = current->version;
  const policy::Policy& was = current->policy;
  // The tenant is part of every live key's scope: another source would give each retry of a
  // live key a new scope, and the work would run again. Not a change to make under traffic.
  if (next.tenantSource() != was.tenantSource() || next.defaultTenant != was.defaultTenant) {
    auto name = [](const policy::Policy& p) {
      const std::string source = p.tenantSource().empty() ? "none declared" : p.tenantSource();
      return p.defaultTenant.empty() ? source : source + ", default tenant \"" + p.defaultTenant + "\"";
    };
    r.refusal = "the tenant source would change (from " + name(was) + " to " + name(next) +
                "), which re-scopes every live key so that retries run again; restart with the new source instead "
                "(idemctl refuses a start that re-scopes live keys unless --accept-tenant-change)";
    return r;
  }
  try {
    pg::Connection conn(m_options.conninfo);
    r.version = recordPolicy(conn, next);
  } catch (const store::LockWaitTimeout& e) {
    r.refusal = std::string("cannot record the policy: ") + e.what();
    return r;
  } catch (const pg::Error& e) {
    r.refusal = std::string("cannot record the policy in the store: ") + e.what();
    return r;
  }
  m_host->replacePolicy(enforce::makeSnapshot(published(std::move(next)), r.version));
  m_policyVersion = r.version;
  r.applied = true;
  return r;
}

std::string Server::adminUrl() const { return m_transport->adminUrl(); }

void Server::run() {
  m_transport->run();
  // The loop ran out of work: the acceptors are closed and every connection answered and closed.
  m_gate->finish();
  m_host->flushTrace();
}

void Server::start() {
  m_thread = std::thread([this] { run(); });
}

void Server::stop() { m_transport->stop(); }

void Server::wait() {
  if (m_thread.joinable()) m_thread.join();
}

}  // namespace idem::endpoint
