#pragma once
// The admin listener's answers: /healthz, /metrics and the published policy (/idempotency) of a
// service, nothing else. A proxy's main port forwards every other path to its upstream, so
// operators get these on a port of their own.
#include "core/gate/host.h"
#include "core/server/handler.h"

namespace idem::gate {

class AdminHandler : public server::Handler {
 public:
  /// `front`: the listener's other handler, whose metricsText() joins /metrics (may be null).
  AdminHandler(Host& host, const server::Handler* front) : m_host(host), m_front(front) {}
  [[nodiscard]] server::Handled handle(const server::Request& request) override;
  [[nodiscard]] Metrics& metrics() override { return m_host.metrics(); }

 private:
  Host& m_host;
  const server::Handler* m_front;
};

}  // namespace idem::gate
