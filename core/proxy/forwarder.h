#pragma once
// `idemctl proxy`'s execution: the gate (core/gate) decides on every request exactly as for
// `serve` (docs/design.md §2); what it lets through is sent to the upstream, and the upstream's
// answer is what the key stores and replays. What an upstream failure means for the key is in
// docs/proxy.md.
//
// No thread waits on the upstream: the exchange runs on the server's event loop; only the store's
// calls (the gate's begin, complete, release) run on the handler threads. A request no tier
// covers never leaves the loop.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/gate/execution.h"
#include "core/gate/host.h"
#include "core/gate/trustedpeers.h"
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

class Forwarder : public gate::Execution {
 public:
  /// Throws std::runtime_error when the upstream's host cannot be resolved. What it reads of the
  /// policy (the docs URL of its problems) comes from each request's own snapshot (gate::Call).
  explicit Forwarder(ProxyOptions options);
  ~Forwarder() override;

  [[nodiscard]] Thread thread() const override { return Thread::Loop; }
  /// A proxy that stopped holding a key cannot say whether its request reached the service, and
  /// the service does not roll back with the key: a taken-over key is not sent again unless its
  /// tier says `on_takeover: execute` (a service that honours the forwarded key itself).
  [[nodiscard]] policy::OnTakeover takeoverDefault() const override { return policy::OnTakeover::OutcomeUnknown; }
  void run(const gate::CallPtr& call) override;
  void stopping() override { m_late.stop(); }
  [[nodiscard]] std::string metricsText() const override;

  [[nodiscard]] const Upstream& upstream() const { return m_upstream; }

 private:
  struct Exchange;
  using ExchangePtr = std::shared_ptr<Exchange>;
  void plainAnswered(const ExchangePtr& x, Sent sent);
  void enforcedAnswered(const ExchangePtr& x, Sent sent);  // a late wait starts here
  /// What became of a keyed exchange (an answer, a break, none in time), for the key.
  gate::Result keyedResult(const gate::Call& call, Sent sent) const;
  /// Takes the exchange's route slot; false (answered 503, or the key released) when it is full.
  bool takeSlot(const ExchangePtr& x, const std::string& route);
  std::chrono::milliseconds timeoutFor(const std::string& tier) const;
  UpstreamRequest upstreamRequest(const server::Request& req, bool enforced) const;
  http::Response notSent(const Sent& sent, const gate::Call& call, std::string_view retry) const;
  http::Response problem(http::Problem p, std::string_view detail, const gate::Call& call, int status = 0) const;

  ProxyOptions m_options;
  Upstream m_upstream;
  LateAnswers m_late;
  RouteSlots m_slots;
  gate::TrustedPeers m_trustedHops;
};

}  // namespace idem::proxy
