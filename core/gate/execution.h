#pragma once
// What runs a request once the gate let it through: serve's demo API (core/endpoint) or the
// upstream call (core/proxy). The gate (gate.h) decides everything around it — tenant, key,
// the store's decision, storing or releasing the answer — once for both; an Execution only
// executes, and says what its answer means for the key (Result::then).
//
// An execution may finish later and elsewhere: run() returns at once, and Call::finish() is
// called exactly once from any thread (the proxy's on the event loop when the upstream answers;
// the demo API's before run() returns, on the handler thread).
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <optional>
#include <string>

#include "core/enforce/enforcer.h"
#include "core/gate/host.h"
#include "core/gate/outcome.h"
#include "core/server/handler.h"

namespace idem::gate {

/// What an execution's answer means for the key that protected it.
struct Result {
  http::Response response;
  enum class Then {
    Complete,  // the work ran (or may have started): the answer is the key's, per the tier's cache rule
    Release,   // nothing ran (refused before any work, upstream not reached): the key is free again
    Unknown,   // it may or may not have run and the answer says so: stored whatever the cache rule
  };
  Then then = Then::Complete;
  std::string reason;                  // Release: why, for the trace
  enforce::CompleteOptions options;    // Complete: the resource reference, same-transaction statements
  std::string resource;                // the resource created, for the access log
  /// The label when no key protected the request (read, not_found, upstream_timeout, ...);
  /// nullopt: the gate's own (forwarded or unkeyed). A keyed request's label is the gate's.
  std::optional<Outcome> outcome;
};

/// A refusal before anything is claimed or run (wrong media type, a body the execution cannot
/// take): nothing is stored, and a corrected retry with the same key runs normally.
struct Refusal {
  http::Response response;
  Outcome outcome = Outcome::BadRequest;
};

class Gate;

/// One request on its way through the execution. Shared: keep it (a shared_ptr) while the work
/// lasts; every method is safe from any thread, but finish() is called once.
class Call : public std::enable_shared_from_this<Call> {
 public:
  Call(Gate& gate, server::Request request, const server::Dispatch& where, server::Done done);
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  ~Call();

  /// The request; its `path` is the one the pipeline matched (canonical for unsafe methods),
  /// `target` what the client sent.
  [[nodiscard]] const server::Request& request() const { return m_request; }
  /// The tier covering the route; "" when none.
  [[nodiscard]] const std::string& tier() const { return m_handled.tier; }
  [[nodiscard]] const std::string& tenant() const { return m_handled.tenant; }
  /// The policy in force when the request arrived: it decides the request to its end, whatever
  /// a reload swaps in meanwhile.
  [[nodiscard]] const policy::Policy& policy() const { return m_policy->policy; }
  [[nodiscard]] const enforce::PolicyPtr& policySnapshot() const { return m_policy; }
  /// The key's claim when one protects this request; nullptr otherwise.
  [[nodiscard]] const enforce::Ticket* ticket() const { return m_ticket ? &*m_ticket : nullptr; }
  [[nodiscard]] const boost::asio::any_io_executor& loop() const { return m_loop; }

  /// The work's answer: the gate settles the key with it (a store write, on a handler thread)
  /// and answers the client, unless answerEarly() already did.
  void finish(Result result);
  /// The client gets `response` now (with the key's headers) while the key stays held; the
  /// later finish() only settles it. For an answer that is still awaited (the proxy's late
  /// answers). Only with a ticket.
  void answerEarly(http::Response response);

 private:
  friend class Gate;
  void settle(Result result);
  /// settle() for a response one statement can store without a thread waiting; false: nothing
  /// was done (settle() it).
  bool settledWithoutWaiting(Result& result);
  void respond();
  /// The request as the enforcer takes it (built once; on one thread at a time).
  const enforce::Request& enforceRequest();

  Gate& m_gate;
  server::Request m_request;
  enforce::PolicyPtr m_policy;  // taken once, at the request's start
  boost::asio::any_io_executor m_loop;
  boost::asio::thread_pool& m_handlers;
  server::Done m_done;
  server::Handled m_handled;
  Outcome m_outcome = Outcome::Forwarded;
  std::string m_executedAs;  // the store's decision for a keyed request (executed, lease_takeover, ...)
  std::optional<enforce::Ticket> m_ticket;
  std::optional<enforce::Request> m_enforceRequest;
  std::optional<Host::InFlight> m_counted;  // until the client's answer is handed over
  enforce::ConflictWait m_wait;             // on_conflict wait: since when, and its place among the waiters
  std::unique_ptr<boost::asio::steady_timer> m_waitTimer;  // on the loop: when to ask the store again
  bool m_answered = false;
  bool m_finished = false;  // finish() was called: the execution gave its answer
};

using CallPtr = std::shared_ptr<Call>;

class Execution {
 public:
  virtual ~Execution() = default;
  /// Where vet() and run() are called: on the event loop (they never block: the proxy) or on a
  /// handler thread (they may block on the store: the demo API).
  enum class Thread { Loop, Handlers };
  [[nodiscard]] virtual Thread thread() const = 0;
  /// Routes no tier covers that still read or write a tenant's data (the demo API's ledger
  /// reads): the tenant header is required on them as on enforced routes.
  [[nodiscard]] virtual bool needsTenant(const server::Request& request) const {
    (void)request;
    return false;
  }
  /// A refusal before the key is claimed; nullopt: the request may run. Never blocks: it may be
  /// called on the event loop whatever thread() says (before a replay from memory).
  [[nodiscard]] virtual std::optional<Refusal> vet(const server::Request& request) {
    (void)request;
    return std::nullopt;
  }
  /// What a retry that took over a stopped holder's key does when its tier does not say
  /// (`on_takeover`). Execute where the work commits with the key (the holder that stopped ran
  /// nothing); OutcomeUnknown where the stopped holder's request may have reached a service that
  /// is not rolled back with it (the proxy).
  [[nodiscard]] virtual policy::OnTakeover takeoverDefault() const { return policy::OnTakeover::Execute; }
  /// Runs the request; calls call->finish() exactly once, now or later.
  virtual void run(const CallPtr& call) = 0;
  /// The server began to stop (on the event loop): end waits that keep the loop busy.
  virtual void stopping() {}
  /// The server stopped: end background work.
  virtual void finish() {}
  /// More Prometheus text for /metrics; "" for none.
  [[nodiscard]] virtual std::string metricsText() const { return {}; }
};

}  // namespace idem::gate
