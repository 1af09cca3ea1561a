#pragma once
// `idemctl proxy`'s handler: every request goes to the upstream; a request on a policy route is
// enforced first exactly as `serve` enforces it (docs/design.md §2), its execution is the forwarded
// request, and the upstream's answer is what the key stores and replays. What an upstream
// failure means for the key is in docs/proxy.md.
//
// No thread waits on the upstream: the exchange runs on the server's event loop; only the store's
// calls (the enforcer's begin, complete, release) run on the handler threads. A request no tier
// covers never leaves the loop.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/server/handler.h"
#include "core/endpoint/host.h"
#include "core/endpoint/tenantgate.h"
#include "core/proxy/lateanswers.h"
#include "core/proxy/routeslots.h"
#include "core/proxy/upstream.h"

namespace idem::proxy {

struct ProxyOptions {
  UpstreamUrl upstream;
  UpstreamOptions client;
  /// How long a sent request that got no answer in time is still awaited in the background
  /// (its key stays leased meanwhile); then its outcome is recorded as unknown.
  std::chrono::milliseconds lateAnswerWait{std::chrono::minutes(5)};
  std::size_t maxLateAnswers = 1024;
  /// A tier's own deadline for the upstream's answer, instead of client.timeout (by tier name).
  std::map<std::string, std::chrono::milliseconds> tierTimeouts;
  /// Exchanges in flight per route at most (RouteSlots); 0: only client.maxConnections bounds them.
  std::size_t maxInFlightPerRoute = 0;
  /// Peers whose forwarding headers (X-Forwarded-*, Forwarded) are kept: the gateway, as given to
  /// --trusted-peers. Anyone else's are replaced by what the proxy saw.
  std::vector<std::string> trustedHops;
};

class Forwarder : public server::Handler {
 public:
  /// Throws std::runtime_error when the upstream's host cannot be resolved.
  Forwarder(endpoint::Host& host, ProxyOptions options);
  ~Forwarder() override;

  bool start(server::Request& request, const server::Dispatch& where, server::Done& done) override;
  [[nodiscard]] server::Metrics& metrics() override { return m_host.metrics(); }
  void stopping() override { m_late.stop(); }
  [[nodiscard]] std::string metricsText() const override;

  [[nodiscard]] const Upstream& upstream() const { return m_upstream; }

 private:
  struct Flow;
  using FlowPtr = std::shared_ptr<Flow>;
  /// A request the enforcer would pass through without the store (no tier, no key to honour).
  bool passesThrough(Flow& f) const;
  void decide(const FlowPtr& f);        // handler thread: the enforcer's begin
  void forwardPlain(const FlowPtr& f);  // loop
  void forwardEnforced(const FlowPtr& f);
  void plainAnswered(const FlowPtr& f, Sent sent);
  void enforcedAnswered(const FlowPtr& f, Sent sent);  // loop: a late wait starts here
  void finishEnforced(const FlowPtr& f, Sent sent);    // handler thread: complete or release
  void respond(const FlowPtr& f);
  /// Takes the flow's route slot; false (answered 503, or the key released) when it is full.
  bool takeSlot(const FlowPtr& f, const std::string& route);
  std::chrono::milliseconds timeoutFor(const std::string& tier) const;
  void failed(const FlowPtr& f, const std::exception& e);  // a 500 for what threw
  UpstreamRequest upstreamRequest(const server::Request& req, bool enforced) const;
  /// Ends a ticket with what became of its exchange (an answer, a break, none in time).
  enforce::Response settle(enforce::Ticket& ticket, Sent sent);
  enforce::Response notSent(const Sent& sent, const std::string& requestId, std::string_view retry) const;
  enforce::Response problem(int status, std::string_view slug, std::string_view title, std::string_view detail,
                            const std::string& requestId) const;

  endpoint::Host& m_host;
  ProxyOptions m_options;
  Upstream m_upstream;
  LateAnswers m_late;
  RouteSlots m_slots;
  endpoint::TrustedPeers m_trustedHops;
};

}  // namespace idem::proxy
