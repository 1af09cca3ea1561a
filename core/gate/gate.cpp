#include "core/gate/gate.h"

#include <boost/asio/post.hpp>

#include "core/http/connectionheader.h"
#include "core/http/keyheader.h"
#include "core/policy/route.h"
#include "core/server/accesslog.h"
#include "core/server/problems.h"
#include "core/store/pg.h"

namespace idem::gate {

using server::Handled;
using server::Request;

namespace {

bool isRead(const std::string& method) { return method == "GET" || method == "HEAD"; }

}  // namespace

Call::Call(Gate& gate, Request request, const server::Dispatch& where, server::Done done)
    : m_gate(gate),
      m_request(std::move(request)),
      m_policy(gate.m_host.policy()),
      m_loop(where.loop),
      m_handlers(where.handlers),
      m_done(std::move(done)),
      m_counted(std::in_place, gate.m_host) {}

// An open ticket ends itself here (enforcer.h: stored as a 500 under after-start).
Call::~Call() = default;

const enforce::Request& Call::enforceRequest() {
  // The tenant comes from the header the gateway sets (vetted in Gate::front()), never parsed by
  // the enforcer itself. Built once: a waiter asks the store many times, a replay from memory
  // may look first.
  if (!m_enforceRequest)
    m_enforceRequest.emplace(enforce::Request{m_request.method, m_request.path, m_request.headers, m_request.body,
                                              m_request.requestId, Host::tenantHeaderValue(policy(), m_request.headers)});
  return *m_enforceRequest;
}

void Call::respond() {
  if (!m_done) return;
  // One Request-Id: the transport's, unless the execution's answer names its own (the service's).
  if (!http::findHeader(m_handled.response.headers, "Request-Id"))
    m_handled.response.headers.emplace_back("Request-Id", m_request.requestId);
  m_handled.outcome = std::string(label(m_outcome));
  m_counted.reset();
  auto done = std::move(m_done);
  m_done = nullptr;
  done(std::move(m_handled));
}

void Call::finish(Result result) {
  m_finished = true;
  if (!m_ticket) {
    m_handled.response = std::move(result.response);
    m_handled.resource = std::move(result.resource);
    if (result.outcome) m_outcome = *result.outcome;
    return respond();
  }
  if (m_gate.m_execution.thread() == Execution::Thread::Handlers) return settle(std::move(result));
  if (result.then == Result::Then::Complete && settledWithoutWaiting(result)) return;
  // Settling writes to the store: never on the loop.
  auto self = shared_from_this();
  boost::asio::post(m_handlers, [self, result = std::move(result)]() mutable { self->settle(std::move(result)); });
}

bool Call::settledWithoutWaiting(Result& result) {
  // The response stored by a statement no thread waits on (enforcer.h, completeWithoutWaiting);
  // the client's answer is given from the store's loop (Done may be called from any thread).
  auto self = shared_from_this();
  return m_gate.m_host.enforcer().completeWithoutWaiting(
      *m_ticket, std::move(result.response), result.options,
      [self, options = result.options, resource = result.resource](bool stored, http::Response response) mutable {
        if (!stored) {  // complete() decides: a lost lease, a store failure (its retries, the backlog)
          Result again;
          again.response = std::move(response);
          again.options = std::move(options);
          again.resource = std::move(resource);
          boost::asio::post(self->m_handlers,
                            [self, again = std::move(again)]() mutable { self->settle(std::move(again)); });
          return;
        }
        if (self->m_answered) return;  // the client had its answer (answerEarly); the key is settled now
        self->m_handled.response = std::move(response);
        self->m_handled.resource = std::move(resource);
        self->respond();
      });
}

void Call::answerEarly(http::Response response) {
  if (!m_ticket || m_answered) throw std::logic_error("answerEarly needs an open ticket and no answer yet");
  m_gate.m_host.enforcer().addKeyHeaders(response, m_ticket->scope().key, m_ticket->expiresAtMs());
  m_handled.response = std::move(response);
  m_outcome = Outcome::AwaitingUpstream;
  m_answered = true;
  respond();
}

void Call::settle(Result result) {
  enforce::Enforcer& enforcer = m_gate.m_host.enforcer();
  enforce::Ticket& ticket = *m_ticket;
  http::Response answer;
  Outcome outcome = m_outcome;  // the store's decision: executed, executed_after_expiry, lease_takeover
  try {
    switch (result.then) {
      case Result::Then::Release:
        answer = enforcer.release(ticket, std::move(result.response), result.reason);
        outcome = Outcome::Released;
        result.resource.clear();
        break;
      case Result::Then::Unknown:
        result.options.outcomeUnknown = true;
        answer = enforcer.complete(ticket, std::move(result.response), result.options);
        outcome = Outcome::OutcomeUnknown;
        break;
      case Result::Then::Complete:
        try {
          answer = enforcer.complete(ticket, std::move(result.response), result.options);
        } catch (const pg::QueryError& e) {
          // The work was a statement of the key's own transaction, which rolled back: nothing ran.
          if (result.options.sameTransaction.empty()) throw;
          server::logInternalError(m_request.requestId, "recording the execution", e.what());
          auto r = server::internalError(m_request.requestId, "Recording the execution failed, so nothing was executed.",
                                         policy().docsUrl);
          answer = enforcer.release(ticket, std::move(r), "the execution's statements failed");
          outcome = Outcome::Error;
          result.resource.clear();
          break;
        }
        // What the ticket's end says overrides the decision: the answer may not be the key's.
        switch (ticket.end()) {
          case enforce::Ticket::End::Open:
          case enforce::Ticket::End::Stored:
          case enforce::Ticket::End::Pending:
          case enforce::Ticket::End::Unrecorded:
            break;
          case enforce::Ticket::End::Released:  // 2xx-only and a failure: not stored
            outcome = Outcome::Released;
            break;
          case enforce::Ticket::End::LeaseLost:
            outcome = Outcome::LeaseLost;
            result.resource.clear();
            break;
          case enforce::Ticket::End::OutcomeUnknown:  // committed or not: a retry with the key finds out
            outcome = Outcome::OutcomeUnknown;
            result.resource.clear();
            break;
        }
        break;
    }
  } catch (const std::exception& e) {
    if (m_answered) {
      server::logInternalError(m_request.requestId, "settling the key after the client's answer", e.what());
      return;
    }
    m_gate.failed(shared_from_this(), e);
    return respond();
  }
  if (m_answered) return;  // the client had its answer (answerEarly); the key is settled now
  m_handled.response = std::move(answer);
  m_handled.resource = std::move(result.resource);
  m_outcome = outcome;
  respond();
}

Gate::Gate(Host& host, Execution& execution, GateOptions options)
    : m_host(host), m_execution(execution), m_options(std::move(options)) {}

bool Gate::start(Request& request, const server::Dispatch& where, server::Done& done) {
  auto call = std::make_shared<Call>(*this, std::move(request), where, std::move(done));
  try {
    front(call);
  } catch (const std::exception& e) {
    failed(call, e);
    call->respond();
  }
  return true;
}

std::optional<http::Response> Gate::untrustedTenant(const policy::Policy& policy, const Request& request) const {
  // Only a gateway's header needs a trusted sender; a credential digest is the client's own.
  if (policy.tenantHeader.empty() || policy.tenantFromAuthorization || m_options.trustedPeers.empty() ||
      m_options.trustedPeers.contains(request.remote) || !http::findHeader(request.headers, policy.tenantHeader))
    return std::nullopt;
  return server::problem(http::Problem::TenantUntrustedPeer,
                         "The " + policy.tenantHeader +
                             " header is accepted only from the gateway (--trusted-peers); this peer is not one. "
                             "Nothing was executed, forwarded or stored.",
                         policy.docsUrl, request.requestId);
}

void Gate::refuse(const CallPtr& call, Refusal refusal) {
  call->m_handled.response = std::move(refusal.response);
  call->m_outcome = refusal.outcome;
  call->respond();
}

void Gate::front(const CallPtr& call) {
  Request& req = call->m_request;
  Handled& h = call->m_handled;
  const policy::Policy& policy = call->policy();

  if (auto refused = untrustedTenant(policy, req)) return refuse(call, {std::move(*refused), Outcome::TenantRejected});

  // The gate's pages: the published policy everywhere clients are; health and metrics where
  // the front owns every path (a proxy forwards those to its service).
  if (isRead(req.method)) {
    if (req.path == "/idempotency") {
      h = m_host.publishedPolicy(req);
      return refuse(call, {std::move(h.response), Outcome::Read});
    }
    if (m_options.pagesOnMain && req.path == "/metrics") {
      h = m_host.metricsPage();
      h.response.body += m_execution.metricsText();
      return refuse(call, {std::move(h.response), Outcome::Read});
    }
    if (m_options.pagesOnMain && req.path == "/healthz") {
      boost::asio::post(call->m_handlers, [this, call] {  // health asks the store
        Handled page = m_host.health(call->m_request.requestId);
        refuse(call, {std::move(page.response), page.response.status == 200 ? Outcome::Health : Outcome::Unavailable});
      });
      return;
    }
  }

  // An unsafe method's path is matched, scoped and executed in canonical form (core/policy/
  // route.h): every spelling of an enforced route meets one tier and one key scope. A safe
  // method keeps the path as sent (resource ids are case-sensitive); `target` stays as sent.
  if (!policy::isSafeMethod(req.method))
    if (auto canonical = policy::canonicalPath(req.path)) req.path = std::move(*canonical);
  const policy::Policy::Match match = policy.match(req.method, req.path);
  const policy::Tier* tier = match.tier;
  if (tier) h.tier = tier->name;  // every answer on a tier's route is counted under it, refusals too
  // A tier in observe refuses nothing: what the gate would refuse here passes on, counted.
  bool observedHere = false;
  auto refuseOrObserve = [&](Refusal refusal) {
    if (!tier || !tier->observed()) return refuse(call, std::move(refusal)), true;
    if (!observedHere) observed(call, match.route, label(refusal.outcome));
    observedHere = true;
    return false;
  };

  // The tenant: one copy, well-formed, and present wherever a tenant's data is touched.
  if (auto bad = Host::tenantProblem(policy, req.headers, tier != nullptr || m_execution.needsTenant(req)))
    if (refuseOrObserve({std::move(*bad), Outcome::TenantRejected})) return;
  h.tenant = Host::tenantOf(policy, req.headers);
  const auto rawKey = http::findHeader(req.headers, enforce::Enforcer::kKeyHeader);
  if (rawKey)
    if (auto parsed = http::parseIdempotencyKey(*rawKey); parsed.key) h.key = *parsed.key;

  // Scoping a key by a header that must be dropped at the next hop (RFC 9110 §7.6.1) would
  // store an answer for a tenant or key the service never saw.
  if (auto named = http::namedInConnection(req.headers, {policy.tenantHeader, enforce::Enforcer::kKeyHeader}))
    if (refuseOrObserve({server::problem(http::Problem::HeaderInConnection,
                                         "The Connection header names " + *named +
                                             ", which Idem decides on and the service must see; send it as an "
                                             "ordinary header. Nothing was executed or stored.",
                                         policy.docsUrl, req.requestId),
                         Outcome::BadRequest}))
      return;

  // No tier and no key to refuse: the store has nothing to decide. Observed already: the
  // request is not one the store could decide on.
  const bool bypass = observedHere || (!tier && (!rawKey || policy::isSafeMethod(req.method)));
  if (m_execution.thread() == Execution::Thread::Loop) {
    if (auto refused = m_execution.vet(req)) return refuse(call, std::move(*refused));
    if (bypass) return m_execution.run(call);  // never leaves the loop
    if (replayedFromMemory(call, false)) return;  // nor does a done key's replay from memory
    if (decidedWithoutWaiting(call)) return;      // nor a new key's claim: its statement is waited on by no thread
    boost::asio::post(call->m_handlers, [this, call] { decide(call); });
    return;
  }
  if (!bypass && replayedFromMemory(call, true)) return;
  boost::asio::post(call->m_handlers, [this, call, bypass] {
    try {
      if (auto refused = m_execution.vet(call->m_request)) return refuse(call, std::move(*refused));
      if (bypass) return m_execution.run(call);
    } catch (const std::exception& e) {
      failed(call, e);
      return call->respond();
    }
    decide(call);
  });
}

bool Gate::replayedFromMemory(const CallPtr& call, bool vetFirst) {
  if (!m_host.enforcer().replays().enabled()) return false;  // --replay-cache off
  auto hit = m_host.enforcer().findInMemory(call->enforceRequest(), call->m_policy);
  if (!hit) return false;
  // The execution's refusals come first, as on the way through a handler thread.
  if (vetFirst)
    if (auto refused = m_execution.vet(call->m_request)) {
      refuse(call, std::move(*refused));
      return true;
    }
  enforce::Decision d = m_host.enforcer().replayFromMemory(*hit);
  call->m_handled.tier = d.tier;
  call->m_handled.response = std::move(d.response);
  call->m_handled.hold = std::move(d.bodyHold);  // the replay budget's share, until the transport wrote it
  // Replayed, or the 503 of a full replay budget.
  call->m_outcome = outcomeNamed(d.outcome).value_or(Outcome::Error);
  call->respond();
  return true;
}

bool Gate::decidedWithoutWaiting(const CallPtr& call) {
  return m_host.enforcer().beginWithoutWaiting(
      call->enforceRequest(), call->m_policy, call->m_wait, [this, call](std::optional<enforce::Decision> d) {
        // Not decided by the fresh claim: the blocking begin() decides, on a handler thread.
        if (!d) return boost::asio::post(call->m_handlers, [this, call] { decide(call); });
        decided(call, std::move(*d));
      });
}

void Gate::decide(const CallPtr& call) {
  std::optional<enforce::Decision> d;
  try {
    d = m_host.enforcer().begin(call->enforceRequest(), call->m_policy, call->m_wait);
  } catch (const std::exception& e) {
    failed(call, e);
    return call->respond();
  }
  decided(call, std::move(*d));
}

void Gate::decided(const CallPtr& call, enforce::Decision d) {
  const Request& req = call->m_request;
  Handled& h = call->m_handled;
  try {
    if (d.kind == enforce::Decision::Kind::Wait) return waitThenDecide(call, d.retryAt);
    if (!d.tier.empty()) h.tier = d.tier;
    if (!d.crossKeyMode.empty()) m_host.metrics().suspectedDuplicate(d.route, d.crossKeyMode);
    const auto named = outcomeNamed(d.outcome);
    call->m_outcome = named.value_or(Outcome::Error);
    // Why the decision was made so goes to the request's access log line; a failure (the
    // store's error behind a 503) to the error log too, under the request id the client quotes.
    h.detail = d.detail;
    if (!d.detail.empty() && (call->m_outcome == Outcome::Unavailable || call->m_outcome == Outcome::Error))
      server::logInternalError(req.requestId, "deciding on the key", d.detail);
    switch (d.kind) {
      case enforce::Decision::Kind::Respond:
        h.response = std::move(d.response);
        h.hold = std::move(d.bodyHold);  // a replay's budget share, until the transport wrote it
        return call->respond();
      case enforce::Decision::Kind::Bypass:
        if (d.observed)
          observed(call, d.route, d.outcome);
        else
          call->m_outcome = d.tier.empty() ? Outcome::Forwarded : Outcome::PassedWithoutKey;
        break;
      case enforce::Decision::Kind::Execute:
        h.generation = d.ticket->generation();
        call->m_ticket.emplace(std::move(*d.ticket));
        // Not under observe: a rollout never changes what the service is sent.
        if (call->m_ticket->takenOver() && !call->m_ticket->tier().observed() &&
            m_host.onTakeover(call->m_ticket->tier()) == policy::OnTakeover::OutcomeUnknown)
          return call->finish(unknownAfterTakeover(*call));
        break;
      case enforce::Decision::Kind::Wait:  // returned above
        break;
    }
  } catch (const std::exception& e) {
    failed(call, e);
    return call->respond();
  }
  run(call);
}

// The key's holder stopped (or lost the store) for a whole lease; what it had sent may have run
// in a service that does not roll back with it. Stored as unknown, so no retry ever runs it again.
Result Gate::unknownAfterTakeover(const Call& call) const {
  Result r;
  r.then = Result::Then::Unknown;
  r.options.notRunAfterTakeover = true;
  r.response = server::problem(
      http::Problem::UpstreamOutcomeUnknown,
      "The process that was handling this key's request stopped (or lost its store) before it recorded the outcome, "
      "and the request may already have been carried out, so it is not run again. This answer is stored: retries with "
      "this key get it. Check the operation's outcome before using a new key.",
      call.policy().docsUrl, call.request().requestId, 502);
  return r;
}

void Gate::waitThenDecide(const CallPtr& call, std::chrono::steady_clock::time_point at) {
  auto askAgain = [this, call] { boost::asio::post(call->m_handlers, [this, call] { decide(call); }); };
  if (!call->m_loop) {  // the transport always gives a loop; without one, one last look
    call->m_wait.lastLook = true;
    return askAgain();
  }
  // The timer lives on the connection's strand: armed and cancelled there only.
  boost::asio::post(call->m_loop, [this, call, at, askAgain] {
    {
      const std::lock_guard lock(m_waitingMutex);
      m_waiting.emplace(call.get(), call);
    }
    // Checked after joining the registry: stopping() either sees this call or was seen here.
    if (m_stopping.load()) call->m_wait.lastLook = true;
    if (!call->m_waitTimer) call->m_waitTimer = std::make_unique<boost::asio::steady_timer>(call->m_loop);
    call->m_waitTimer->expires_at(call->m_wait.lastLook ? std::chrono::steady_clock::now() : at);
    call->m_waitTimer->async_wait([this, call, askAgain](const boost::system::error_code& cancelled) {
      {
        const std::lock_guard lock(m_waitingMutex);
        m_waiting.erase(call.get());
      }
      if (cancelled) call->m_wait.lastLook = true;  // the server is stopping
      askAgain();
    });
  });
}

void Gate::stopping() {
  m_execution.stopping();
  // Waiters would keep a stopping server up for the rest of their wait: each looks once more
  // now (a replay if the original finished, else its 409).
  m_stopping.store(true);
  std::vector<CallPtr> waiting;
  {
    const std::lock_guard lock(m_waitingMutex);
    for (const auto& [_, weak] : m_waiting)
      if (auto call = weak.lock()) waiting.push_back(std::move(call));
  }
  for (const auto& call : waiting)
    boost::asio::post(call->m_loop, [call] {
      if (call->m_waitTimer) call->m_waitTimer->cancel();
    });
}

void Gate::run(const CallPtr& call) {
  auto runNow = [this, call] {
    try {
      m_execution.run(call);
    } catch (const std::exception& e) {
      failed(call, e);
      // The work may have begun: the key keeps the 500 (after-start) or is freed (2xx-only),
      // settled on a handler thread before the client's answer — never left to the ticket's
      // destructor on whichever thread drops the call, after the client could retry.
      if (call->m_ticket && !call->m_finished) {
        Result r;
        r.response = std::move(call->m_handled.response);
        return call->finish(std::move(r));
      }
      call->respond();
    }
  };
  // The transport always gives a loop; the empty case is spelled out for the static analyzer,
  // which otherwise follows asio's post into an empty executor.
  if (m_execution.thread() == Execution::Thread::Handlers || !call->m_loop) return runNow();
  boost::asio::post(call->m_loop, runNow);
}

void Gate::observed(const CallPtr& call, std::string_view route, std::string_view would) {
  call->m_outcome = Outcome::Observed;
  call->m_handled.would = std::string(would);
  m_host.metrics().observed(route, would);
}

void Gate::failed(const CallPtr& call, const std::exception& e) {
  const Request& req = call->m_request;
  server::logInternalError(req.requestId, req.method + " " + req.path, e.what());
  call->m_handled.response =
      server::internalError(req.requestId, "The server failed while handling the request.", call->policy().docsUrl);
  call->m_outcome = Outcome::Error;
}

}  // namespace idem::gate
