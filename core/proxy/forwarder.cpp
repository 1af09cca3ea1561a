#include "core/proxy/forwarder.h"

#include "core/server/accesslog.h"
#include "core/server/problems.h"
#include "core/proxy/answerrules.h"
#include "core/proxy/forwarding.h"
#include "core/text/humanduration.h"

namespace idem::proxy {

using server::Request;

// One request's exchange with the upstream; shared by the callbacks on the loop.
struct Forwarder::Exchange {
  explicit Exchange(gate::CallPtr c) : call(std::move(c)) {}
  gate::CallPtr call;
  std::string slot;  // the route slot held while the exchange (or its late wait) lasts
  RouteSlots* slots = nullptr;
  void giveSlot() {
    if (slots) slots->give(slot);
    slots = nullptr;
  }
};

Forwarder::Forwarder(ProxyOptions options)
    : m_options(std::move(options)),
      m_upstream(m_options.upstream, m_options.client),
      m_late(m_options.lateAnswerWait, m_options.maxLateAnswers),
      m_slots(m_options.maxInFlightPerRoute) {
  std::string error;
  auto hops = gate::TrustedPeers::parse(m_options.trustedHops, error);
  if (!hops) throw std::runtime_error("trusted peers: " + error);
  m_trustedHops = std::move(*hops);
}

// Late waits were ended by stopping() and the loop ran them out before this; nothing is left to join.
Forwarder::~Forwarder() = default;

std::string Forwarder::metricsText() const {
  return "# HELP idem_upstream_connections_opened_total Connections the proxy opened to its upstream.\n"
         "# TYPE idem_upstream_connections_opened_total counter\n"
         "idem_upstream_connections_opened_total " +
         std::to_string(m_upstream.connectionsOpened()) +
         "\n# HELP idem_upstream_connections_reused_total Requests sent on a kept-alive upstream connection.\n"
         "# TYPE idem_upstream_connections_reused_total counter\n"
         "idem_upstream_connections_reused_total " +
         std::to_string(m_upstream.connectionsReused()) +
         "\n# HELP idem_upstream_connections_open Connections to the upstream open now (in use, idle, awaiting).\n"
         "# TYPE idem_upstream_connections_open gauge\n"
         "idem_upstream_connections_open " +
         std::to_string(m_upstream.connectionsOpen()) +
         "\n# HELP idem_upstream_late_answers_pending Sent requests whose answer is awaited in the background.\n"
         "# TYPE idem_upstream_late_answers_pending gauge\n"
         "idem_upstream_late_answers_pending " +
         std::to_string(m_late.pending()) + "\n";
}

http::Response Forwarder::problem(http::Problem p, std::string_view detail, const gate::Call& call,
                                  int status) const {
  // The docs of the policy the request began under (a reload may have swapped it since).
  return server::problem(p, detail, call.policy().docsUrl, call.request().requestId, status);
}

void Forwarder::run(const gate::CallPtr& call) {
  auto x = std::make_shared<Exchange>(call);
  const Request& req = call->request();
  const bool keyed = call->ticket() != nullptr;
  const std::string& tier = call->tier();
  if (!takeSlot(x, tier.empty() ? req.method + " " + req.path : "tier " + tier)) return;
  if (keyed) {
    m_upstream.send(upstreamRequest(req, true), false, call->loop(),
                    [this, x](Sent sent) { enforcedAnswered(x, std::move(sent)); }, timeoutFor(tier));
  } else {
    m_upstream.send(upstreamRequest(req, false), idempotentMethod(req.method), call->loop(),
                    [this, x](Sent sent) { plainAnswered(x, std::move(sent)); }, timeoutFor(tier));
  }
}

UpstreamRequest Forwarder::upstreamRequest(const Request& req, bool enforced) const {
  ForwardedFor who{req.remote, req.requestId, std::nullopt, m_trustedHops.contains(req.remote)};
  // The key goes on exactly as the client sent it: the service sees what it would see without
  // the proxy and can pass it on to its own provider unchanged ("order-1", not "\"order-1\"").
  // Idem reads both spellings as one key (docs/design.md §2); the enforcer has vetted it.
  if (enforced)
    if (auto raw = http::findHeader(req.headers, enforce::Enforcer::kKeyHeader)) who.key = std::string(*raw);
  return UpstreamRequest{req.method, req.target, towardsUpstream(req.headers, who), req.body};
}

bool Forwarder::takeSlot(const ExchangePtr& x, const std::string& route) {
  if (m_slots.take(route)) {
    x->slot = route;
    x->slots = &m_slots;
    return true;
  }
  Sent busy;
  busy.failure = Failure::NotSent;
  busy.busy = true;
  busy.detail = "the route " + route + " already has " + std::to_string(m_slots.perRoute()) +
                " requests with the upstream (--upstream-connections-per-route)";
  const gate::CallPtr& call = x->call;
  if (call->ticket()) {
    call->finish(keyedResult(*call, std::move(busy)));
  } else {
    server::logInternalError(call->request().requestId, "forwarding to the upstream", busy.detail);
    gate::Result result;
    result.response = notSent(busy, *call, "Retry later.");
    result.outcome = gate::Outcome::UpstreamUnavailable;
    call->finish(std::move(result));
  }
  return false;
}

std::chrono::milliseconds Forwarder::timeoutFor(const std::string& tier) const {
  const auto it = m_options.tierTimeouts.find(tier);
  return it == m_options.tierTimeouts.end() ? m_options.client.timeout : it->second;
}

void Forwarder::plainAnswered(const ExchangePtr& x, Sent sent) {
  x->giveSlot();
  const gate::CallPtr& call = x->call;
  const Request& req = call->request();
  gate::Result result;
  if (sent.failure == Failure::None) {
    result.response = fromUpstream(sent.answer, req.method == "HEAD");
    return call->finish(std::move(result));
  }
  server::logInternalError(req.requestId, "forwarding to the upstream", sent.detail);
  if (sent.failure == Failure::NotSent) {
    result.response = notSent(sent, *call, "Retry later.");
    result.outcome = gate::Outcome::UpstreamUnavailable;
    return call->finish(std::move(result));
  }
  // The late answer of an unkeyed request has nobody to go to: its connection is closed.
  if (sent.pending) sent.pending->cancel();
  // No key protects this request, so nobody can wait for its answer on the client's behalf.
  const bool timeout = sent.failure == Failure::NoAnswer;
  result.response = problem(timeout ? http::Problem::UpstreamTimeout : http::Problem::UpstreamBroken,
                            "The request was sent to the service behind this proxy, which gave no answer; it may or "
                            "may not have executed. Send an Idempotency-Key to make retries safe.",
                            *call);
  result.outcome = timeout ? gate::Outcome::UpstreamTimeout : gate::Outcome::UpstreamBroken;
  call->finish(std::move(result));
}

void Forwarder::enforcedAnswered(const ExchangePtr& x, Sent sent) {
  const gate::CallPtr& call = x->call;
  if (sent.failure == Failure::NoAnswer) {
    auto pending = sent.pending;
    // The key stays held while the answer is awaited on the loop; the gate settles it (a store
    // write, on a handler thread) when the answer, a break or the bound comes.
    const bool adopted = m_late.adopt(pending, [this, x](Sent late) {
      x->giveSlot();
      x->call->finish(keyedResult(*x->call, std::move(late)));
    });
    if (adopted) {
      auto r = problem(http::Problem::UpstreamTimeout,
                       "The request was sent to the service behind this proxy, which has not answered within " +
                           text::humanDuration(timeoutFor(call->tier())) +
                           ". It may still be executing: the key stays held while the proxy keeps waiting for the "
                           "answer. Retry with the same key: you get 409 until the answer is in, then the answer; it "
                           "is never executed a second time.",
                       *call);
      r.headers.emplace_back("Retry-After", "5");
      return call->answerEarly(std::move(r));
    }
    pending->cancel();  // too many already awaited: settled now, as never answered
  }
  x->giveSlot();
  call->finish(keyedResult(*call, std::move(sent)));
}

gate::Result Forwarder::keyedResult(const gate::Call& call, Sent sent) const {
  const Request& req = call.request();
  const std::string& requestId = req.requestId;
  distrustUnverifiable(sent);
  gate::Result result;
  switch (sent.failure) {
    case Failure::None:
      if (refusedBeforeWork(sent.answer)) {
        result.then = gate::Result::Then::Release;
        result.reason = "the upstream refused before any work: " + std::to_string(sent.answer.status);
      } else {
        result.options = naming(sent.answer);  // before fromUpstream takes the body it reads the id from
      }
      result.response = fromUpstream(sent.answer, req.method == "HEAD");
      return result;
    case Failure::NotSent:
      server::logInternalError(requestId, "forwarding to the upstream", sent.detail);
      result.response = notSent(sent, call, "The key is free again: retry with the same key.");
      result.then = gate::Result::Then::Release;
      result.reason = "upstream not reached: " + sent.detail;
      return result;
    case Failure::NoAnswer:
    case Failure::Broken:
      break;
  }
  server::logInternalError(requestId, "awaiting the upstream's answer", sent.detail);
  const bool neverAnswered = sent.failure == Failure::NoAnswer;
  result.response = problem(
      http::Problem::UpstreamOutcomeUnknown,
      std::string(neverAnswered ? "The service behind this proxy took the request and never answered"
                  : sent.answer.closeDelimited
                      ? "The service behind this proxy took the request and ended its answer by closing the "
                        "connection, so whether the whole answer came cannot be told"
                      : "The service behind this proxy took the request and the connection broke before its whole "
                        "answer came") +
          ", so it may or may not have executed. This answer is stored: retries with this key get it and never "
          "execute the request again. Check the operation's outcome before using a new key.",
      call, neverAnswered ? 504 : 502);
  result.then = gate::Result::Then::Unknown;
  return result;
}

http::Response Forwarder::notSent(const Sent& sent, const gate::Call& call, std::string_view retry) const {
  const std::string nothing = ", so the request was not sent and nothing was executed. " + std::string(retry);
  auto r = sent.busy ? problem(http::Problem::UpstreamBusy,
                               "The proxy has no free connection to the service behind it" + nothing, call)
                     : problem(http::Problem::UpstreamUnavailable,
                               "The service behind this proxy could not be reached" + nothing, call);
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

}  // namespace idem::proxy
