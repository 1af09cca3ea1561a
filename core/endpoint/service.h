#pragma once
// serve's demo API as an Execution of the gate (core/gate): routes, validation, execution with
// its ledger row, fault injection by header (faults.h). The gate decides tenant, key and what is
// stored; this executes, on a handler thread (it writes the ledger).
#include "core/gate/execution.h"
#include "core/gate/host.h"

namespace idem::endpoint {

class Service : public gate::Execution {
 public:
  /// allowFaultInjection: Sim-Delay-Ms and Sim-Fail are honoured (else answered 400).
  Service(gate::Host& host, bool allowFaultInjection);

  [[nodiscard]] Thread thread() const override { return Thread::Handlers; }
  /// The ledger's reads and writes are a tenant's data, whatever the policy covers.
  [[nodiscard]] bool needsTenant(const server::Request& request) const override;
  /// Unknown routes, wrong media type, fault headers, a body that is not JSON or misses fields:
  /// refused before the key is claimed.
  [[nodiscard]] std::optional<gate::Refusal> vet(const server::Request& request) override;
  void run(const gate::CallPtr& call) override;

 private:
  gate::Result postResource(const gate::Call& call);
  gate::Result echo(const server::Request& request) const;
  gate::Result listResources(const gate::Call& call);
  gate::Result getResource(const gate::Call& call);

  gate::Host& m_host;
  const bool m_allowFaultInjection;
};

}  // namespace idem::endpoint
