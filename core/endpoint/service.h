#pragma once
// serve's demo API without HTTP plumbing: routes, validation, enforcement through the host,
// execution with its ledger row, fault injection by header (faults.h). The transport
// (core/server) hands it each request; the host (host.h) holds the store and the enforcer.
#include "core/endpoint/host.h"
#include "core/server/handler.h"

namespace idem::endpoint {

class Service : public server::Handler {
 public:
  /// allowFaultInjection: Sim-Delay-Ms and Sim-Fail are honoured (else answered 400).
  Service(Host& host, bool allowFaultInjection);

  /// Answers one request. Thread-safe; never throws for store trouble (answers 503).
  [[nodiscard]] server::Handled handle(const server::Request& request) override;
  [[nodiscard]] Metrics& metrics() override { return m_host.metrics(); }

 private:
  server::Handled postResource(const server::Request& request);
  server::Handled echo(const server::Request& request) const;
  server::Handled listResources(const server::Request& request);
  server::Handled getResource(const server::Request& request);

  Host& m_host;
  const bool m_allowFaultInjection;
};

}  // namespace idem::endpoint
