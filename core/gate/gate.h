#pragma once
// The enforced-request pipeline, written once for `serve` and `proxy` (docs/design.md §5):
//   trusted peer → pages (/idempotency; /healthz, /metrics where the front owns every path)
//   → tenant → key → the store's decision (enforce::Enforcer::begin)
//   → respond | execute | bypass → complete | release | outcome unknown | answer early, settle later.
// What executes is an Execution (execution.h): the demo API or the upstream call. The gate is
// the transport's Handler for the main listener; nothing here blocks the event loop (the store's
// calls run on the handler threads).
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/gate/execution.h"
#include "core/gate/host.h"
#include "core/gate/trustedpeers.h"
#include "core/server/handler.h"

namespace idem::gate {

struct GateOptions {
  /// /healthz and /metrics on the main listener too (serve). A proxy forwards those paths to
  /// its service; operators read them on the admin listener.
  bool pagesOnMain = true;
  /// The policy's tenant header is accepted only from these peers; empty: from any peer.
  TrustedPeers trustedPeers;
};

class Gate : public server::Handler {
 public:
  Gate(Host& host, Execution& execution, GateOptions options);

  bool start(server::Request& request, const server::Dispatch& where, server::Done& done) override;
  [[nodiscard]] server::Metrics& metrics() override { return m_host.metrics(); }
  void stopping() override;
  void finish() override { m_execution.finish(); }
  [[nodiscard]] std::string metricsText() const override { return m_execution.metricsText(); }

  [[nodiscard]] Host& host() { return m_host; }

 private:
  friend class Call;
  void front(const CallPtr& call);   // loop: peers, pages, tenant, header checks
  void decide(const CallPtr& call);  // handler thread: the enforcer's begin
  /// loop: the enforcer's begin where a statement no thread waits on decides (a new key's
  /// claim); false when only decide() can.
  bool decidedWithoutWaiting(const CallPtr& call);
  /// What the enforcer decided, carried out: respond, wait, or run the execution.
  void decided(const CallPtr& call, enforce::Decision d);
  /// loop: a done key's replay the cache holds, answered without a handler thread; false when
  /// only decide() can answer. `vetFirst`: the execution's refusals were not checked yet.
  bool replayedFromMemory(const CallPtr& call, bool vetFirst);
  void run(const CallPtr& call);     // where the execution runs
  /// A taken-over key whose tier (or front) says `on_takeover: outcome_unknown`: not run, the
  /// answer that says so is the key's.
  [[nodiscard]] Result unknownAfterTakeover(const Call& call) const;
  /// on_conflict wait: a timer on the call's loop, then decide() again on a handler thread. No
  /// thread is held meanwhile.
  void waitThenDecide(const CallPtr& call, std::chrono::steady_clock::time_point at);
  /// The 403 for a tenant header from an untrusted peer; nullopt when the request may go on.
  [[nodiscard]] std::optional<http::Response> untrustedTenant(const policy::Policy& policy,
                                                             const server::Request& request) const;
  void refuse(const CallPtr& call, Refusal refusal);
  /// A tier in observe passes the request on although enforcement decided `would`: labelled
  /// `observed`, the decision in the access log's `would` and idem_observed_total.
  void observed(const CallPtr& call, std::string_view route, std::string_view would);
  void failed(const CallPtr& call, const std::exception& e);

  Host& m_host;
  Execution& m_execution;
  GateOptions m_options;
  /// Calls waiting on their timer, so that stopping ends their waits at once.
  std::atomic<bool> m_stopping{false};
  std::mutex m_waitingMutex;
  std::unordered_map<const Call*, std::weak_ptr<Call>> m_waiting;
};

}  // namespace idem::gate
