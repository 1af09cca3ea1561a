#include "core/gate/admin.h"

#include "core/server/problems.h"

namespace idem::gate {

server::Handled AdminHandler::handle(const server::Request& req) {
  server::Handled h;
  const bool known = req.path == "/healthz" || req.path == "/metrics" || req.path == "/idempotency";
  if (known && (req.method == "GET" || req.method == "HEAD")) {
    if (req.path == "/idempotency") {
      h = m_host.publishedPolicy(req);  // where an operator fetches the page to publish at docs_url
    } else {
      h = req.path == "/healthz" ? m_host.health(req.requestId) : m_host.metricsPage();
      if (req.path == "/metrics" && m_front) h.response.body += m_front->metricsText();
    }
  } else {
    h.response = server::problemForStatus(known ? 405 : 404, req.method, req.path, m_host.policy()->policy.docsUrl);
    h.outcome = known ? "method_not_allowed" : "not_found";
  }
  h.response.headers.emplace_back("Request-Id", req.requestId);
  return h;
}

}  // namespace idem::gate
