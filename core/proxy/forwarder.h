#pragma once
// `idemctl proxy`'s handler: every request goes to the upstream; a request on a policy route is
// enforced first exactly as `serve` enforces it (docs/design.md §2), its execution is the forwarded
// request, and the upstream's answer is what the key stores and replays. What an upstream
// failure means for the key is in the README ("idemctl proxy": upstream failures).
#include <chrono>
#include <memory>

#include "core/endpoint/handler.h"
#include "core/endpoint/service.h"
#include "core/proxy/lateanswers.h"
#include "core/proxy/upstream.h"

namespace idem::proxy {

struct ProxyOptions {
  UpstreamUrl upstream;
  UpstreamOptions client;
  /// How long a sent request that got no answer in time is still awaited in the background
  /// (its key stays leased meanwhile); then its outcome is recorded as unknown.
  std::chrono::milliseconds lateAnswerWait{std::chrono::minutes(5)};
  std::size_t maxLateAnswers = 1024;
};

class Forwarder : public endpoint::Handler {
 public:
  /// Throws std::runtime_error when the upstream's host cannot be resolved.
  Forwarder(endpoint::Service& service, ProxyOptions options);
  ~Forwarder() override;

  [[nodiscard]] endpoint::Handled handle(const endpoint::ServiceRequest& request) override;
  [[nodiscard]] endpoint::Metrics& metrics() override { return m_service.metrics(); }
  void finish() override { m_late.finish(); }
  [[nodiscard]] std::string metricsText() const override;

  [[nodiscard]] const Upstream& upstream() const { return m_upstream; }

 private:
  endpoint::Handled enforced(const endpoint::ServiceRequest& req, enforce::Ticket& ticket, endpoint::Handled h);
  endpoint::Handled plain(const endpoint::ServiceRequest& req, endpoint::Handled h);
  UpstreamRequest upstreamRequest(const endpoint::ServiceRequest& req, const enforce::Ticket* ticket) const;
  /// Ends a ticket whose exchange ended without an answer in time: see LateAnswers::Settle.
  enforce::Response settle(enforce::Ticket& ticket, Sent sent);
  /// The problem for a request that never went out: 503 when the proxy's own bounds were
  /// reached, 502 when the upstream could not be reached; Retry-After either way.
  enforce::Response notSent(const Sent& sent, const std::string& requestId, std::string_view retry) const;
  enforce::Response problem(int status, std::string_view slug, std::string_view title, std::string_view detail,
                            const std::string& requestId) const;

  endpoint::Service& m_service;
  ProxyOptions m_options;
  Upstream m_upstream;
  LateAnswers m_late;  // last: its threads settle tickets through the members above
};

}  // namespace idem::proxy
