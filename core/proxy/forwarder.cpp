#include "core/proxy/forwarder.h"

#include <boost/asio/post.hpp>

#include "core/server/accesslog.h"
#include "core/server/problems.h"
#include "core/http/keyheader.h"
#include "core/policy/route.h"
#include "core/proxy/answerrules.h"
#include "core/proxy/forwarding.h"
#include "core/text/humanduration.h"
#include "core/trace/outcome.h"

namespace idem::proxy {

using server::Handled;
using server::Request;

// One request's way through the proxy; shared by the steps on the loop and on the handler threads.
struct Forwarder::Flow {
  Flow(Request r, const server::Dispatch& where, server::Done d, endpoint::Host& host)
      : req(std::move(r)), loop(where.loop), handlers(where.handlers), done(std::move(d)), counted(std::in_place, host) {}
  Request req;
  boost::asio::any_io_executor loop;
  boost::asio::thread_pool& handlers;
  server::Done done;
  Handled h;
  std::optional<enforce::Ticket> ticket;
  std::optional<endpoint::Host::InFlight> counted;  // until the client's answer is handed over
  std::string slot;  // the route slot held while the exchange (or its late wait) lasts
  RouteSlots* slots = nullptr;
  void giveSlot() {
    if (slots) slots->give(slot);
    slots = nullptr;
  }
};

Forwarder::Forwarder(endpoint::Host& host, ProxyOptions options)
    : m_host(host),
      m_options(std::move(options)),
      m_upstream(m_options.upstream, m_options.client),
      m_late(m_options.lateAnswerWait, m_options.maxLateAnswers),
      m_slots(m_options.maxInFlightPerRoute) {
  std::string error;
  auto hops = endpoint::TrustedPeers::parse(m_options.trustedHops, error);
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

enforce::Response Forwarder::problem(int status, std::string_view slug, std::string_view title, std::string_view detail,
                                     const std::string& requestId) const {
  return server::problem(status, slug, title, detail, m_host.policy().docsUrl, requestId);
}

bool Forwarder::start(Request& request, const server::Dispatch& where, server::Done& done) {
  auto f = std::make_shared<Flow>(std::move(request), where, std::move(done), m_host);
  if (passesThrough(*f)) {
    f->h.outcome = "forwarded";
    forwardPlain(f);
  } else {
    boost::asio::post(f->handlers, [this, f] { decide(f); });
  }
  return true;
}

bool Forwarder::passesThrough(Flow& f) const {
  const Request& req = f.req;
  const policy::Policy& policy = m_host.policy();
  if ((req.method == "GET" || req.method == "HEAD") && req.path == "/idempotency") return false;
  if (policy.match(req.method, req.path).tier != nullptr) return false;
  if (m_host.tenantProblem(req.headers, false)) return false;  // refused on the handler thread, with its words
  const auto raw = http::findHeader(req.headers, enforce::Enforcer::kKeyHeader);
  if (raw && !policy::isSafeMethod(req.method)) return false;  // the enforcer refuses a key it cannot honour
  f.h.tenant = m_host.tenantHeaderValue(req.headers).value_or(policy.defaultTenant);
  if (raw)
    if (auto parsed = http::parseIdempotencyKey(*raw); parsed.key) f.h.key = *parsed.key;
  return true;
}

void Forwarder::decide(const FlowPtr& f) {
  const Request& req = f->req;
  Handled& h = f->h;
  try {
    const policy::Policy& policy = m_host.policy();
    if ((req.method == "GET" || req.method == "HEAD") && req.path == "/idempotency") {
      h = m_host.publishedPolicy(req);  // the policy the proxy enforces, published where clients are
    } else if (auto bad = m_host.tenantProblem(req.headers, policy.match(req.method, req.path).tier != nullptr)) {
      // A repeated or malformed tenant header is refused on every route, forwarded ones too: the
      // upstream must not be left to guess which copy the gateway set.
      h.response = std::move(*bad);
      h.outcome = "tenant_rejected";
    } else if (auto named = hopByHopDecisionField(req.headers, {policy.tenantHeader, enforce::Enforcer::kKeyHeader})) {
      // Scoping a key by a header that must then be removed (RFC 9110 §7.6.1) would store the
      // service's answer for a tenant the service never saw: which one the client meant is unknown.
      h.response = problem(400, "bad-request", "Header named in Connection",
                           "The Connection header names " + *named +
                               ", which the proxy decides on and must pass to the service; send it as an ordinary "
                               "header. Nothing was executed or stored.",
                           req.requestId);
      h.outcome = "bad_request";
    } else {
      const auto tenant = m_host.tenantHeaderValue(req.headers);
      h.tenant = tenant.value_or(policy.defaultTenant);
      if (auto raw = http::findHeader(req.headers, enforce::Enforcer::kKeyHeader))
        if (auto parsed = http::parseIdempotencyKey(*raw); parsed.key) h.key = *parsed.key;
      const enforce::Request er{req.method, req.path, req.headers, req.body, req.requestId, tenant};
      enforce::Decision d = m_host.enforcer().begin(er);
      h.tier = d.tier;
      h.outcome = d.outcome;
      if (!d.detail.empty()) server::logInternalError(req.requestId, "deciding on the key", d.detail);
      if (d.kind == enforce::Decision::Kind::Respond) {
        h.response = std::move(d.response);
      } else if (d.ticket) {
        h.generation = d.ticket->generation();
        f->ticket.emplace(std::move(*d.ticket));
        return boost::asio::post(f->loop, [this, f] { forwardEnforced(f); });
      } else {
        h.outcome = d.tier.empty() ? "forwarded" : "unkeyed";
        return boost::asio::post(f->loop, [this, f] { forwardPlain(f); });
      }
    }
  } catch (const std::exception& e) {
    failed(f, e);
  }
  respond(f);
}

void Forwarder::failed(const FlowPtr& f, const std::exception& e) {
  const Request& req = f->req;
  server::logInternalError(req.requestId, req.method + " " + req.path, e.what());
  f->h.response = server::internalError(req.requestId, "The proxy failed while handling the request.",
                                          m_host.policy().docsUrl);
  f->h.outcome = "error";
}

void Forwarder::respond(const FlowPtr& f) {
  if (!http::findHeader(f->h.response.headers, "Request-Id"))
    f->h.response.headers.emplace_back("Request-Id", f->req.requestId);
  f->counted.reset();
  auto done = std::move(f->done);
  f->done = nullptr;
  if (done) done(std::move(f->h));
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

bool Forwarder::takeSlot(const FlowPtr& f, const std::string& route) {
  if (m_slots.take(route)) {
    f->slot = route;
    f->slots = &m_slots;
    return true;
  }
  Sent busy;
  busy.failure = Failure::NotSent;
  busy.busy = true;
  busy.detail = "the route " + route + " already has " + std::to_string(m_slots.perRoute()) +
                " requests with the upstream (--upstream-connections-per-route)";
  if (f->ticket) {
    boost::asio::post(f->handlers, [this, f, busy = std::move(busy)]() mutable { finishEnforced(f, std::move(busy)); });
  } else {
    server::logInternalError(f->req.requestId, "forwarding to the upstream", busy.detail);
    f->h.response = notSent(busy, f->req.requestId, "Retry later.");
    f->h.outcome = "upstream_unavailable";
    respond(f);
  }
  return false;
}

std::chrono::milliseconds Forwarder::timeoutFor(const std::string& tier) const {
  const auto it = m_options.tierTimeouts.find(tier);
  return it == m_options.tierTimeouts.end() ? m_options.client.timeout : it->second;
}

void Forwarder::forwardPlain(const FlowPtr& f) {
  if (!takeSlot(f, f->h.tier.empty() ? f->req.method + " " + f->req.path : "tier " + f->h.tier)) return;
  m_upstream.send(upstreamRequest(f->req, false), idempotentMethod(f->req.method), f->loop,
                  [this, f](Sent sent) { plainAnswered(f, std::move(sent)); }, timeoutFor(f->h.tier));
}

void Forwarder::plainAnswered(const FlowPtr& f, Sent sent) {
  f->giveSlot();
  const Request& req = f->req;
  Handled& h = f->h;
  if (sent.failure == Failure::None) {
    h.response = fromUpstream(sent.answer, req.method == "HEAD");
    return respond(f);
  }
  server::logInternalError(req.requestId, "forwarding to the upstream", sent.detail);
  if (sent.failure == Failure::NotSent) {
    h.response = notSent(sent, req.requestId, "Retry later.");
    h.outcome = "upstream_unavailable";
    return respond(f);
  }
  // The late answer of an unkeyed request has nobody to go to: its connection is closed.
  if (sent.pending) sent.pending->cancel();
  // No key protects this request, so nobody can wait for its answer on the client's behalf.
  const bool timeout = sent.failure == Failure::NoAnswer;
  h.response = problem(timeout ? 504 : 502, timeout ? "upstream-timeout" : "upstream-broken",
                       timeout ? "Upstream did not answer in time" : "Upstream connection broke",
                       "The request was sent to the service behind this proxy, which gave no answer; it may or may "
                       "not have executed. Send an Idempotency-Key to make retries safe.",
                       req.requestId);
  h.outcome = timeout ? "upstream_timeout" : "upstream_broken";
  respond(f);
}

void Forwarder::forwardEnforced(const FlowPtr& f) {
  if (!takeSlot(f, "tier " + f->h.tier)) return;
  m_upstream.send(upstreamRequest(f->req, true), false, f->loop,
                  [this, f](Sent sent) { enforcedAnswered(f, std::move(sent)); }, timeoutFor(f->h.tier));
}

void Forwarder::enforcedAnswered(const FlowPtr& f, Sent sent) {
  if (sent.failure == Failure::NoAnswer) {
    enforce::Ticket& ticket = *f->ticket;
    auto pending = sent.pending;
    // The ticket stays open while the answer is awaited on the loop; it is settled on a handler
    // thread (a store write) when the answer, a break or the bound comes.
    const bool adopted = m_late.adopt(pending, [this, f](Sent late) {
      f->giveSlot();
      boost::asio::post(f->handlers, [this, f, late = std::move(late)]() mutable { (void)settle(*f->ticket, std::move(late)); });
    });
    if (adopted) {
      auto r = problem(504, "upstream-timeout", "Upstream did not answer in time",
                       "The request was sent to the service behind this proxy, which has not answered within " +
                           text::humanDuration(timeoutFor(f->h.tier)) +
                           ". It may still be executing: the key stays held while the proxy keeps waiting for the "
                           "answer. Retry with the same key: you get 409 until the answer is in, then the answer; it "
                           "is never executed a second time.",
                       f->req.requestId);
      r.headers.emplace_back("Retry-After", "5");
      m_host.enforcer().addKeyHeaders(r, ticket.scope().key, ticket.expiresAtMs());
      f->h.response = std::move(r);
      f->h.outcome = "awaiting_upstream";
      return respond(f);
    }
    pending->cancel();  // too many already awaited: settled now, as never answered
  }
  f->giveSlot();
  boost::asio::post(f->handlers, [this, f, sent = std::move(sent)]() mutable { finishEnforced(f, std::move(sent)); });
}

void Forwarder::finishEnforced(const FlowPtr& f, Sent sent) {
  const Request& req = f->req;
  Handled& h = f->h;
  enforce::Enforcer& enforcer = m_host.enforcer();
  enforce::Ticket& ticket = *f->ticket;
  try {
    distrustUnverifiable(sent);
    switch (sent.failure) {
      case Failure::None: {
        const int status = sent.answer.status;
        if (refusedBeforeWork(sent.answer)) {
          h.response = enforcer.release(ticket, fromUpstream(sent.answer, req.method == "HEAD"),
                                        "the upstream refused before any work: " + std::to_string(status));
          h.outcome = "released";
          break;
        }
        auto options = naming(sent.answer);
        h.response = enforcer.complete(ticket, fromUpstream(sent.answer, req.method == "HEAD"), options);
        // Under `2xx-only` a failure is not stored: complete() released the key.
        if (ticket.tier().cache == policy::CacheRule::SuccessOnly && (status < 200 || status >= 300))
          h.outcome = "released";
        break;
      }
      case Failure::NotSent:
        server::logInternalError(req.requestId, "forwarding to the upstream", sent.detail);
        h.response = enforcer.release(ticket, notSent(sent, req.requestId, "The key is free again: retry with the same key."),
                                      "upstream not reached: " + sent.detail);
        h.outcome = "released";
        break;
      case Failure::NoAnswer:
      case Failure::Broken:
        h.response = settle(ticket, std::move(sent));
        h.outcome = trace::sqlName(trace::Outcome::OutcomeUnknown);
        break;
    }
  } catch (const std::exception& e) {
    failed(f, e);
  }
  respond(f);
}

enforce::Response Forwarder::settle(enforce::Ticket& ticket, Sent sent) {
  enforce::Enforcer& enforcer = m_host.enforcer();
  distrustUnverifiable(sent);
  if (sent.failure == Failure::None) {
    if (refusedBeforeWork(sent.answer))
      return enforcer.release(ticket, fromUpstream(sent.answer, false),
                              "the upstream refused before any work: " + std::to_string(sent.answer.status));
    auto options = naming(sent.answer);
    return enforcer.complete(ticket, fromUpstream(sent.answer, false), options);
  }
  const std::string& requestId = ticket.requestId();
  server::logInternalError(requestId, "awaiting the upstream's answer", sent.detail);
  const bool neverAnswered = sent.failure == Failure::NoAnswer;
  auto r = problem(
      neverAnswered ? 504 : 502, "upstream-outcome-unknown", "Outcome unknown",
      std::string(neverAnswered ? "The service behind this proxy took the request and never answered"
                  : sent.answer.closeDelimited
                      ? "The service behind this proxy took the request and ended its answer by closing the "
                        "connection, so whether the whole answer came cannot be told"
                      : "The service behind this proxy took the request and the connection broke before its whole "
                        "answer came") +
          ", so it may or may not have executed. This answer is stored: retries with this key get it and never "
          "execute the request again. Check the operation's outcome before using a new key.",
      requestId);
  enforce::CompleteOptions unknown;
  unknown.outcomeUnknown = true;
  return enforcer.complete(ticket, std::move(r), unknown);
}

enforce::Response Forwarder::notSent(const Sent& sent, const std::string& requestId, std::string_view retry) const {
  const std::string nothing = ", so the request was not sent and nothing was executed. " + std::string(retry);
  auto r = sent.busy ? problem(503, "upstream-unavailable", "Proxy busy",
                               "The proxy has no free connection to the service behind it" + nothing, requestId)
                     : problem(502, "upstream-unavailable", "Upstream unavailable",
                               "The service behind this proxy could not be reached" + nothing, requestId);
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

}  // namespace idem::proxy
