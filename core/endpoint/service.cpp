#include "core/endpoint/service.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <thread>

#include "core/endpoint/faults.h"
#include "core/endpoint/jsonresponse.h"
#include "core/endpoint/ledger.h"
#include "core/endpoint/resources.h"
#include "core/http/keyheader.h"
#include "core/policy/route.h"
#include "core/server/accesslog.h"
#include "core/server/problems.h"
#include "core/text/json_text.h"

namespace idem::endpoint {
namespace {

using nlohmann::json;

constexpr std::string_view kEchoRoute = "/v1/echo";

/// A body text::parseClientJson refused (not JSON, too deep): sets the 400 and returns true.
/// `afterwards` tells the client what became of the request.
bool refuseBody(const text::ClientJson& body, const std::string& docs, std::string_view afterwards,
                server::Handled& h) {
  if (body.error == text::ClientJson::Error::None) return false;
  const bool tooDeep = body.error == text::ClientJson::Error::TooDeep;
  std::string detail = body.reason + ".";
  detail[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(detail[0])));
  h.response = enforce::makeProblem(tooDeep ? enforce::Problem::BodyTooDeep : enforce::Problem::BodyInvalid, docs,
                                    detail + std::string(afterwards));
  h.outcome = tooDeep ? "body_too_deep" : "body_invalid";
  return true;
}

/// Resource ids are ours (newResourceId: a prefix and letters or digits); anything else names
/// no resource and must not reach SQL, where bytes that are not UTF-8 are an error.
bool plausibleResourceId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

/// application/json, optionally with parameters (charset=utf-8); case-insensitive.
bool isJsonContentType(const http::Headers& headers) {
  auto ct = http::findHeader(headers, "Content-Type");
  if (!ct) return false;
  std::string_view v = *ct;
  v = v.substr(0, v.find(';'));
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  return http::equalsIgnoreCase(v, "application/json");
}

long long nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::optional<std::string> queryValue(const server::Request& r, const std::string& name) {
  auto it = r.query.find(name);
  if (it == r.query.end()) return std::nullopt;
  return it->second;
}

// A 404 that names what this API serves.
enforce::Response noSuchRoute(const server::Request& req, const std::string& docs) {
  return server::problem(404, "not-found", "No such route",
                         "There is no route " + req.method + " " + req.path +
                             ". The endpoint serves POST /v1/payments, /v1/refunds, /v1/orders, GET /v1/payments, "
                             "GET /idempotency, /metrics and /healthz.",
                         docs);
}

enforce::Response storeUnavailable(const std::string& docs) {
  auto r = server::problem(503, "store-unavailable", "Idempotency store unavailable",
                           "The store cannot be reached right now. Retry later.", docs);
  r.headers.emplace_back("Retry-After", "2");
  return r;
}

}  // namespace

Service::Service(Host& host, bool allowFaultInjection) : m_host(host), m_allowFaultInjection(allowFaultInjection) {}

server::Handled Service::handle(const server::Request& req) {
  const Host::InFlight counted(m_host);

  server::Handled h;
  bool routed = true;
  const std::string& docs = m_host.policy().docsUrl;
  // A POST's path is matched in canonical form (core/policy/route.h), as the enforcer matches
  // it: every spelling of an enforced route reaches its handler under one key scope. GETs keep
  // the path as sent: resource ids are case-sensitive.
  const server::Request* routedReq = &req;
  std::optional<server::Request> canonicalReq;
  if (req.method == "POST") {
    if (auto canonical = policy::canonicalPath(req.path); canonical && *canonical != req.path) {
      canonicalReq = req;
      canonicalReq->path = std::move(*canonical);
      routedReq = &*canonicalReq;
    }
  }
  const std::string& path = routedReq->path;
  // Routes that read or write a tenant's data need one (a 405 or 404 needs none).
  const bool reads = req.method == "GET" || req.method == "HEAD";
  const bool tenantData = (req.method == "POST" && kindForRoute(path)) ||
                          (reads && (kindForCollection(path) || [&] {
                             const auto slash = path.rfind('/');
                             return slash != std::string::npos && slash > 0 && kindForCollection(path.substr(0, slash));
                           }()));
  try {
    if (auto bad = m_host.tenantProblem(req.headers, tenantData)) {
      h.response = std::move(*bad);
      h.outcome = "tenant_rejected";
      routed = true;
    } else if (req.method == "GET" || req.method == "HEAD") {
      if (req.path == "/idempotency") {
        h = m_host.publishedPolicy(req);
      } else if (req.path == "/metrics") {
        h = m_host.metricsPage();
      } else if (req.path == "/healthz") {
        h = m_host.health(req.requestId);
      } else if (kindForCollection(req.path)) {
        h = listResources(req);
      } else if (auto slash = req.path.rfind('/');
                 slash != std::string::npos && slash > 0 && kindForCollection(req.path.substr(0, slash))) {
        h = getResource(req);
      } else {
        routed = false;
      }
    } else if (req.method == "POST") {
      if (path == kEchoRoute) {
        h = echo(*routedReq);
      } else if (kindForRoute(path)) {
        h = postResource(*routedReq);
      } else {
        routed = false;
      }
    } else {
      routed = false;
    }
    if (!routed) {
      const bool known = path == kEchoRoute || kindForRoute(path) || req.path == "/idempotency" ||
                         req.path == "/metrics" || req.path == "/healthz";
      h.response = known ? server::problemForStatus(405, req.method, req.path, docs) : noSuchRoute(req, docs);
      h.outcome = known ? "method_not_allowed" : "not_found";
    }
  } catch (const std::exception& e) {
    server::logInternalError(req.requestId, req.method + " " + req.path, e.what());
    h.response = server::internalError(req.requestId, "The endpoint failed while handling the request.", docs);
    h.outcome = "error";
  }
  h.response.headers.emplace_back("Request-Id", req.requestId);
  return h;
}

server::Handled Service::postResource(const server::Request& req) {
  const ResourceKind& kind = *kindForRoute(req.path);
  const std::string& docs = m_host.policy().docsUrl;
  server::Handled h;
  h.tenant = m_host.tenantOf(req.headers);
  if (const policy::Tier* tier = m_host.policy().tierFor(req.method, req.path)) h.tier = tier->name;
  if (auto raw = http::findHeader(req.headers, enforce::Enforcer::kKeyHeader))
    if (auto parsed = http::parseIdempotencyKey(*raw); parsed.key) h.key = *parsed.key;

  // Everything that can be refused without executing is refused before the claim: nothing is
  // stored, and a corrected retry with the same key runs normally.
  if (!isJsonContentType(req.headers)) {
    h.response = server::problem(
        415, "unsupported-media-type", "Unsupported media type",
        "Send the body as JSON with Content-Type: application/json. Nothing was executed or stored.", docs);
    h.outcome = "unsupported_media_type";
    return h;
  }
  const FaultParse faults = parseFaults(req.headers, m_allowFaultInjection);
  if (faults.error) {
    h.response = server::problem(400, "fault-injection", "Fault injection refused", *faults.error, docs);
    h.outcome = "fault_rejected";
    return h;
  }
  text::ClientJson parsed = text::parseClientJson(req.body);
  if (refuseBody(parsed, docs, " Nothing was executed or stored.", h)) return h;
  const json& body = parsed.value;
  if (auto error = validateBody(kind, body)) {
    h.response =
        server::problem(400, "body-invalid", "Request body is invalid",
                        *error + ". Nothing was executed or stored; fix the body and retry with the same key.", docs);
    h.outcome = "body_invalid";
    return h;
  }

  // The tenant comes from the header the gateway sets (vetted in handle()), never parsed by
  // the enforcer itself.
  enforce::Request er{req.method, req.path, req.headers, req.body, req.requestId, m_host.tenantHeaderValue(req.headers)};
  enforce::Decision d = m_host.enforcer().begin(er);
  if (!d.tier.empty()) h.tier = d.tier;
  h.outcome = d.outcome;
  if (d.kind == enforce::Decision::Kind::Respond) {
    h.response = std::move(d.response);
    return h;
  }
  enforce::Ticket* ticket = d.ticket ? &*d.ticket : nullptr;
  if (!ticket) h.outcome = d.tier.empty() ? "unenforced" : "unkeyed";
  if (ticket) h.generation = ticket->generation();

  // Execution starts here: the key (if any) is processing until complete() or release().
  if (faults.faults.delay.count() > 0) std::this_thread::sleep_for(faults.faults.delay);
  if (faults.faults.failBefore) {
    auto r = server::problem(503, "simulated-failure-before", "Simulated failure before execution",
                             "Sim-Fail: before — the request failed before execution started; nothing was executed or "
                             "stored. Retry with the same key.",
                             docs);
    r.headers.emplace_back("Retry-After", "1");
    h.response = ticket ? m_host.enforcer().release(*ticket, std::move(r), "simulated failure before execution (Sim-Fail)")
                        : std::move(r);
    h.outcome = trace::sqlName(trace::Outcome::Released);
    return h;
  }

  const bool failAfter = faults.faults.failAfter;
  Execution ex = buildResource(kind, body, nowSeconds(), failAfter);
  h.resource = ex.id;
  LedgerRow& row = ex.ledger;
  row.tenant = h.tenant;
  row.endpoint = req.method + " " + req.path;
  row.requestId = req.requestId;
  if (ticket) {
    row.key = ticket->scope().key;
    row.generation = ticket->generation();
    // The downstream call (the channel) gets the key in the strict sf-string form.
    if (auto sf = http::serializeSfString(ticket->scope().key)) row.payload["downstream_idempotency_key"] = *sf;
  }

  enforce::Response response;
  if (failAfter) {
    response =
        server::problem(500, "simulated-failure-after", "Simulated failure after execution started",
                        "Sim-Fail: after — execution started and then failed: " + ex.id +
                            " may or may not have reached the channel (its ledger row says failed). This response "
                            "is stored; a retry with the same key replays it.",
                        docs);
  } else {
    response = jsonResponse(kind.successStatus, ex.resource);
    response.headers.emplace_back("Location", std::string(kind.route) + "/" + ex.id);
  }

  if (!ticket) {
    try {
      auto lease = m_host.pool().acquire();
      const auto insert = insertStatement(row);
      lease.conn().exec(insert.sql, insert.params);
    } catch (const pg::Error& e) {
      // The insert is the execution: when the store refused it for now, nothing ran.
      const auto* q = dynamic_cast<const pg::QueryError*>(&e);
      if (q && !q->transient()) throw;
      h.response = storeUnavailable(docs);
      h.outcome = "unavailable";
      h.resource.clear();
      return h;
    }
    h.response = std::move(response);
    return h;
  }

  enforce::CompleteOptions options;
  options.resourceRef = ex.id;
  options.sameTransaction.push_back(insertStatement(row));
  try {
    h.response = m_host.enforcer().complete(*ticket, std::move(response), options);
  } catch (const pg::QueryError& e) {
    // The transaction rolled back: neither the ledger row nor the key's completion exist.
    server::logInternalError(req.requestId, "recording the execution", e.what());
    auto r = server::internalError(req.requestId, "Recording the execution failed, so nothing was executed.", docs);
    h.response = m_host.enforcer().release(*ticket, std::move(r), "ledger insert failed");
    h.outcome = "error";
    h.resource.clear();
    return h;
  }
  switch (ticket->end()) {
    case enforce::Ticket::End::Open:
    case enforce::Ticket::End::Stored:
    case enforce::Ticket::End::Pending:
    case enforce::Ticket::End::Unrecorded:
    case enforce::Ticket::End::Released:
      break;
    case enforce::Ticket::End::LeaseLost:
      h.outcome = trace::sqlName(trace::Outcome::LeaseLost);
      h.resource.clear();
      break;
    case enforce::Ticket::End::OutcomeUnknown:
      h.outcome = "unavailable";  // committed or not: a retry with the key finds out
      h.resource.clear();
      break;
  }
  return h;
}

server::Handled Service::echo(const server::Request& req) const {
  server::Handled h;
  h.outcome = "unenforced";
  if (!isJsonContentType(req.headers)) {
    h.response = server::problem(415, "unsupported-media-type", "Unsupported media type",
                                 "Send the body as JSON with Content-Type: application/json.", m_host.policy().docsUrl);
    h.outcome = "unsupported_media_type";
    return h;
  }
  text::ClientJson parsed = text::parseClientJson(req.body);
  if (refuseBody(parsed, m_host.policy().docsUrl, "", h)) return h;
  h.response = jsonResponse(200, json{{"object", "echo"}, {"echo", std::move(parsed.value)}});
  return h;
}

server::Handled Service::listResources(const server::Request& req) {
  const ResourceKind& kind = *kindForCollection(req.path);
  server::Handled h;
  h.outcome = "read";
  h.tenant = m_host.tenantOf(req.headers);  // vetted for every route in handle()
  int limit = 100;
  if (auto l = queryValue(req, "limit")) {
    int v = 0;
    const std::string_view text = *l;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || ptr != text.data() + text.size() || v < 1 || v > 1000) {
      h.response = server::problem(400, "bad-query", "Invalid query parameter",
                                   "limit must be an integer from 1 to 1000.", m_host.policy().docsUrl);
      h.outcome = "bad_query";
      return h;
    }
    limit = v;
  }
  auto key = queryValue(req, "idempotency_key");
  if (key) {
    const http::KeyParse parsed = http::parseIdempotencyKey(*key);
    if (!parsed.key) {
      h.response = server::problem(400, "bad-query", "Invalid query parameter",
                                   "idempotency_key is not a valid Idempotency-Key: " + parsed.rule, m_host.policy().docsUrl);
      h.outcome = "bad_query";
      return h;
    }
    key = h.key = *parsed.key;
  }
  try {
    auto data = m_host.pool().withRetry(
        [&](pg::Connection& c) { return listLedger(c, std::string(kind.object), h.tenant, key, limit); });
    h.response = jsonResponse(200, json{{"object", "list"}, {"data", std::move(data)}});
  } catch (const pg::Unavailable&) {
    h.response = storeUnavailable(m_host.policy().docsUrl);
    h.outcome = "unavailable";
  }
  return h;
}

server::Handled Service::getResource(const server::Request& req) {
  const auto slash = req.path.rfind('/');
  const ResourceKind& kind = *kindForCollection(req.path.substr(0, slash));
  const std::string id = req.path.substr(slash + 1);
  server::Handled h;
  h.outcome = "read";
  h.tenant = m_host.tenantOf(req.headers);  // vetted for every route in handle()
  try {
    std::optional<json> row;
    if (plausibleResourceId(id))
      row = m_host.pool().withRetry([&](pg::Connection& c) { return findLedger(c, std::string(kind.object), h.tenant, id); });
    if (row) {
      h.response = jsonResponse(200, *row);
    } else {
      h.response =
          server::problem(404, "not-found", "No such resource",
                          "No " + std::string(kind.object) + " " + id + " for this " +
                              (m_host.policy().tenantHeader.empty() ? std::string("server") : m_host.policy().tenantHeader) + ".",
                          m_host.policy().docsUrl);
      h.outcome = "not_found";
    }
  } catch (const pg::Unavailable&) {
    h.response = storeUnavailable(m_host.policy().docsUrl);
    h.outcome = "unavailable";
  }
  return h;
}

}  // namespace idem::endpoint
