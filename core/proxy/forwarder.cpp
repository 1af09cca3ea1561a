#include "core/proxy/forwarder.h"

#include "core/endpoint/accesslog.h"
#include "core/endpoint/problems.h"
#include "core/http/keyheader.h"
#include "core/policy/duration.h"
#include "core/text/humanduration.h"
#include "core/policy/route.h"
#include "core/proxy/createdresource.h"
#include "core/proxy/forwarding.h"
#include "core/trace/outcome.h"

namespace idem::proxy {
namespace {

using endpoint::Handled;
using endpoint::ServiceRequest;

enforce::Response fromUpstream(UpstreamAnswer& a, bool head) {
  enforce::Response r{a.status, towardsClient(a.headers), std::move(a.body)};
  // A HEAD answer's Content-Length is the GET answer's size (RFC 9110 §9.3.2), not its empty body's.
  if (head)
    if (auto length = http::findHeader(a.headers, "Content-Length")) r.headers.emplace_back("Content-Length", *length);
  return r;
}

// Answers that say the upstream refused the request before doing any of its work, and that a
// retry may well change: not stored (a key would replay a stale refusal for its whole TTL), the
// key is released and the answer passed through. 401/407: not authenticated (yet); 408: the
// upstream did not get the whole request; 429: rate limited; 503 with Retry-After: shedding
// load. 403 is not among them: it is usually a decision on the resource's state, as final as a
// 422, and replaying it is what a retry would get anyway.
bool refusedBeforeWork(const UpstreamAnswer& a) {
  switch (a.status) {
    case 401:
    case 407:
    case 408:
    case 429:
      return true;
    case 503:
      return http::findHeader(a.headers, "Retry-After").has_value();
    default:
      return false;
  }
}

// An enforced request's answer must be known whole to be stored as its status: a close-delimited
// one ended by a FIN that may have come mid-body (a crash, a cut) looks the same as a whole one.
void distrustUnverifiable(Sent& sent) {
  if (sent.failure != Failure::None || !sent.answer.closeDelimited) return;
  sent.failure = Failure::Broken;
  sent.detail = "the upstream's " + std::to_string(sent.answer.status) +
                " answer had no Content-Length and was not chunked: it ended when the connection closed, so it "
                "cannot be known to be whole";
}

// Stored with the key, so support finds it by the id the customer quotes.
enforce::CompleteOptions naming(const UpstreamAnswer& a) {
  enforce::CompleteOptions options;
  options.resourceRef = createdResource(a.status, a.headers, a.body);
  return options;
}

// RFC 9110 §9.2.2: a request with one of these methods may be sent again when a connection
// fails, so a pooled connection the upstream had closed is retried for them.
bool idempotentMethod(const std::string& m) {
  return m == "GET" || m == "HEAD" || m == "OPTIONS" || m == "TRACE" || m == "PUT" || m == "DELETE";
}

}  // namespace

Forwarder::Forwarder(endpoint::Service& service, ProxyOptions options)
    : m_service(service),
      m_options(std::move(options)),
      m_upstream(m_options.upstream, m_options.client),
      m_late(m_options.lateAnswerWait, m_options.maxLateAnswers,
             [this](enforce::Ticket& ticket, Sent sent) { (void)settle(ticket, std::move(sent)); }) {}

Forwarder::~Forwarder() { m_late.finish(); }

std::string Forwarder::metricsText() const {
  return "# HELP idem_upstream_connections_opened_total Connections the proxy opened to its upstream.\n"
         "# TYPE idem_upstream_connections_opened_total counter\n"
         "idem_upstream_connections_opened_total " +
         std::to_string(m_upstream.connectionsOpened()) +
         "\n# HELP idem_upstream_connections_reused_total Requests sent on a kept-alive upstream connection.\n"
         "# TYPE idem_upstream_connections_reused_total counter\n"
         "idem_upstream_connections_reused_total " +
         std::to_string(m_upstream.connectionsReused()) +
         "\n# HELP idem_upstream_late_answers_pending Sent requests whose answer is awaited in the background.\n"
         "# TYPE idem_upstream_late_answers_pending gauge\n"
         "idem_upstream_late_answers_pending " +
         std::to_string(m_late.pending()) + "\n";
}

enforce::Response Forwarder::problem(int status, std::string_view slug, std::string_view title, std::string_view detail,
                                     const std::string& requestId) const {
  return endpoint::problem(status, slug, title, detail, m_service.policy().docsUrl, requestId);
}

Handled Forwarder::handle(const ServiceRequest& req) {
  const endpoint::Service::InFlight counted(m_service);
  Handled h;
  try {
    const policy::Policy& policy = m_service.policy();
    if ((req.method == "GET" || req.method == "HEAD") && req.path == "/idempotency") {
      h = m_service.publishedPolicy(req);  // the policy the proxy enforces, published where clients are
    } else if (auto bad = m_service.tenantProblem(req.headers, policy.match(req.method, req.path).tier != nullptr)) {
      // A repeated or malformed tenant header is refused on every route, forwarded ones too: the
      // upstream must not be left to guess which copy the gateway set.
      h.response = std::move(*bad);
      h.outcome = "tenant_rejected";
    } else {
      const auto tenant = m_service.tenantHeaderValue(req.headers);
      h.tenant = tenant.value_or(policy.defaultTenant);
      if (auto raw = http::findHeader(req.headers, enforce::Enforcer::kKeyHeader))
        if (auto parsed = http::parseIdempotencyKey(*raw); parsed.key) h.key = *parsed.key;
      const enforce::Request er{req.method, req.path, req.headers, req.body, req.requestId, tenant};
      enforce::Decision d = m_service.enforcer().begin(er);
      h.tier = d.tier;
      h.outcome = d.outcome;
      if (!d.detail.empty()) endpoint::logInternalError(req.requestId, "deciding on the key", d.detail);
      if (d.kind == enforce::Decision::Kind::Respond) {
        h.response = std::move(d.response);
      } else if (d.ticket) {
        h.generation = d.ticket->generation();
        h = enforced(req, *d.ticket, std::move(h));
      } else {
        h.outcome = d.tier.empty() ? "forwarded" : "unkeyed";
        h = plain(req, std::move(h));
      }
    }
  } catch (const std::exception& e) {
    endpoint::logInternalError(req.requestId, req.method + " " + req.path, e.what());
    h.response = endpoint::internalError(req.requestId, "The proxy failed while handling the request.",
                                         m_service.policy().docsUrl);
    h.outcome = "error";
  }
  if (!http::findHeader(h.response.headers, "Request-Id")) h.response.headers.emplace_back("Request-Id", req.requestId);
  return h;
}

UpstreamRequest Forwarder::upstreamRequest(const ServiceRequest& req, const enforce::Ticket* ticket) const {
  ForwardedFor who{req.remote, req.requestId, std::nullopt};
  // The key goes on exactly as the client sent it: the service sees what it would see without
  // the proxy and can pass it on to its own provider unchanged ("order-1", not "\"order-1\"").
  // Idem reads both spellings as one key (docs/design.md §2); the enforcer has vetted it.
  if (ticket)
    if (auto raw = http::findHeader(req.headers, enforce::Enforcer::kKeyHeader)) who.key = std::string(*raw);
  return UpstreamRequest{req.method, req.target, towardsUpstream(req.headers, who), req.body};
}

Handled Forwarder::enforced(const ServiceRequest& req, enforce::Ticket& ticket, Handled h) {
  enforce::Enforcer& enforcer = m_service.enforcer();
  Sent sent = m_upstream.send(upstreamRequest(req, &ticket), false);
  distrustUnverifiable(sent);
  const bool head = req.method == "HEAD";
  switch (sent.failure) {
    case Failure::None: {
      const int status = sent.answer.status;
      if (refusedBeforeWork(sent.answer)) {
        h.response = enforcer.release(ticket, fromUpstream(sent.answer, head),
                                      "the upstream refused before any work: " + std::to_string(status));
        h.outcome = "released";
        return h;
      }
      auto options = naming(sent.answer);
      h.response = enforcer.complete(ticket, fromUpstream(sent.answer, head), options);
      // Under `2xx-only` a failure is not stored: complete() released the key.
      if (ticket.tier().cache == policy::CacheRule::SuccessOnly && (status < 200 || status >= 300))
        h.outcome = "released";
      return h;
    }
    case Failure::NotSent: {
      endpoint::logInternalError(req.requestId, "forwarding to the upstream", sent.detail);
      auto r = notSent(sent, req.requestId, "The key is free again: retry with the same key.");
      h.response = enforcer.release(ticket, std::move(r), "upstream not reached: " + sent.detail);
      h.outcome = "released";
      return h;
    }
    case Failure::NoAnswer: {
      const std::string key = ticket.scope().key;
      const long long expiresAt = ticket.expiresAtMs();
      if (!m_late.adopt(ticket, sent.pending)) break;  // settled below, now
      auto r = problem(504, "upstream-timeout", "Upstream did not answer in time",
                       "The request was sent to the service behind this proxy, which has not answered within " +
                           text::humanDuration(m_options.client.timeout) +
                           ". It may still be executing: the key stays held while the proxy keeps waiting for the "
                           "answer. Retry with the same key: you get 409 until the answer is in, then the answer; it "
                           "is never executed a second time.",
                       req.requestId);
      r.headers.emplace_back("Retry-After", "5");
      enforcer.addKeyHeaders(r, key, expiresAt);
      h.response = std::move(r);
      h.outcome = "awaiting_upstream";
      return h;
    }
    case Failure::Broken:
      break;
  }
  h.response = settle(ticket, std::move(sent));
  h.outcome = trace::sqlName(trace::Outcome::OutcomeUnknown);
  return h;
}

enforce::Response Forwarder::settle(enforce::Ticket& ticket, Sent sent) {
  enforce::Enforcer& enforcer = m_service.enforcer();
  distrustUnverifiable(sent);
  if (sent.failure == Failure::None) {
    if (refusedBeforeWork(sent.answer))
      return enforcer.release(ticket, fromUpstream(sent.answer, false),
                              "the upstream refused before any work: " + std::to_string(sent.answer.status));
    auto options = naming(sent.answer);
    return enforcer.complete(ticket, fromUpstream(sent.answer, false), options);
  }
  const std::string& requestId = ticket.requestId();
  endpoint::logInternalError(requestId, "awaiting the upstream's answer", sent.detail);
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

Handled Forwarder::plain(const ServiceRequest& req, Handled h) {
  Sent sent = m_upstream.send(upstreamRequest(req, nullptr), idempotentMethod(req.method));
  if (sent.failure == Failure::None) {
    h.response = fromUpstream(sent.answer, req.method == "HEAD");
    return h;
  }
  endpoint::logInternalError(req.requestId, "forwarding to the upstream", sent.detail);
  if (sent.failure == Failure::NotSent) {
    h.response = notSent(sent, req.requestId, "Retry later.");
    h.outcome = "upstream_unavailable";
    return h;
  }
  // No key protects this request, so nobody can wait for its answer on the client's behalf.
  const bool timeout = sent.failure == Failure::NoAnswer;
  h.response = problem(timeout ? 504 : 502, timeout ? "upstream-timeout" : "upstream-broken",
                       timeout ? "Upstream did not answer in time" : "Upstream connection broke",
                       "The request was sent to the service behind this proxy, which gave no answer; it may or may "
                       "not have executed. Send an Idempotency-Key to make retries safe.",
                       req.requestId);
  h.outcome = timeout ? "upstream_timeout" : "upstream_broken";
  return h;
}

}  // namespace idem::proxy
