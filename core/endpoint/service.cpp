#include "core/endpoint/service.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <thread>

#include "core/endpoint/faults.h"
#include "core/gate/jsonresponse.h"
#include "core/endpoint/ledger.h"
#include "core/endpoint/resources.h"
#include "core/http/keyheader.h"
#include "core/server/problems.h"
#include "core/text/json_text.h"

namespace idem::endpoint {
namespace {

using nlohmann::json;

constexpr std::string_view kEchoRoute = "/v1/echo";

/// A body text::parseClientJson refused (not JSON, too deep); nullopt when it parsed.
/// `afterwards` tells the client what became of the request.
std::optional<gate::Refusal> refuseBody(const text::ClientJson& body, const std::string& docs,
                                        std::string_view afterwards) {
  if (body.error == text::ClientJson::Error::None) return std::nullopt;
  const bool tooDeep = body.error == text::ClientJson::Error::TooDeep;
  std::string detail = body.reason + ".";
  detail[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(detail[0])));
  return gate::Refusal{enforce::makeProblem(tooDeep ? enforce::Problem::BodyTooDeep : enforce::Problem::BodyInvalid,
                                            docs, detail + std::string(afterwards)),
                       tooDeep ? gate::Outcome::BodyTooDeep : gate::Outcome::BodyInvalid};
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
  return server::problem(http::Problem::NotFound,
                         "There is no route " + req.method + " " + req.path +
                             ". The endpoint serves POST /v1/payments, /v1/refunds, /v1/orders, GET /v1/payments, "
                             "GET /idempotency, /metrics and /healthz.",
                         docs);
}

enforce::Response storeUnavailable(const std::string& docs) {
  auto r = server::problem(http::Problem::StoreUnavailable,
                           "The store cannot be reached right now. Retry later.", docs);
  r.headers.emplace_back("Retry-After", "2");
  return r;
}

}  // namespace

Service::Service(gate::Host& host, bool allowFaultInjection)
    : m_host(host), m_allowFaultInjection(allowFaultInjection) {}

namespace {

/// The item route under a collection ("/v1/payments/pay_1"): its kind, else nullptr.
const ResourceKind* itemKind(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return nullptr;
  return kindForCollection(path.substr(0, slash));
}

bool isRead(const std::string& method) { return method == "GET" || method == "HEAD"; }

}  // namespace

bool Service::needsTenant(const server::Request& req) const {
  if (req.method == "POST") return kindForRoute(req.path) != nullptr;
  return isRead(req.method) && (kindForCollection(req.path) || itemKind(req.path));
}

std::optional<gate::Refusal> Service::vet(const server::Request& req) {
  const enforce::PolicyPtr inForce = m_host.policy();  // held: `docs` refers into it
  const std::string& docs = inForce->policy.docsUrl;
  const std::string& path = req.path;
  if (isRead(req.method) && (kindForCollection(path) || itemKind(path))) return std::nullopt;
  const ResourceKind* kind = req.method == "POST" ? kindForRoute(path) : nullptr;
  const bool isEcho = req.method == "POST" && path == kEchoRoute;
  if (!kind && !isEcho) {
    const bool known = path == kEchoRoute || kindForRoute(path) || path == "/idempotency" || path == "/metrics" ||
                       path == "/healthz" || kindForCollection(path) || itemKind(path);
    if (known) return gate::Refusal{server::problemForStatus(405, req.method, path, docs), gate::Outcome::MethodNotAllowed};
    return gate::Refusal{noSuchRoute(req, docs), gate::Outcome::NotFound};
  }
  // Everything that can be refused without executing is refused before the claim: nothing is
  // stored, and a corrected retry with the same key runs normally.
  const std::string_view afterwards = kind ? " Nothing was executed or stored." : "";
  if (!isJsonContentType(req.headers))
    return gate::Refusal{server::problem(http::Problem::UnsupportedMediaType,
                                         "Send the body as JSON with Content-Type: application/json." +
                                             std::string(afterwards),
                                         docs),
                         gate::Outcome::BadRequest};
  if (kind)
    if (const FaultParse faults = parseFaults(req.headers, m_allowFaultInjection); faults.error)
      return gate::Refusal{server::problem(http::Problem::FaultInjection, *faults.error, docs),
                           gate::Outcome::BadRequest};
  const text::ClientJson parsed = text::parseClientJson(req.body);
  if (auto refused = refuseBody(parsed, docs, afterwards)) return refused;
  if (kind)
    if (auto error = validateBody(*kind, parsed.value))
      return gate::Refusal{
          server::problem(http::Problem::BodyInvalid,
                          *error + ". Nothing was executed or stored; fix the body and retry with the same key.", docs),
          gate::Outcome::BodyInvalid};
  return std::nullopt;
}

void Service::run(const gate::CallPtr& call) {
  const server::Request& req = call->request();
  gate::Result result;
  if (req.method == "POST")
    result = req.path == kEchoRoute ? echo(req) : postResource(*call);
  else
    result = kindForCollection(req.path) ? listResources(*call) : getResource(*call);
  call->finish(std::move(result));
}

gate::Result Service::postResource(const gate::Call& call) {
  const server::Request& req = call.request();
  const ResourceKind& kind = *kindForRoute(req.path);
  const std::string& docs = call.policy().docsUrl;
  const enforce::Ticket* ticket = call.ticket();
  // vet() refused what does not parse; these are the same headers and body.
  const Faults faults = parseFaults(req.headers, m_allowFaultInjection).faults;
  const json body = text::parseClientJson(req.body).value;

  // Execution starts here: the key (if any) is processing until the gate completes or releases it.
  if (faults.delay.count() > 0) std::this_thread::sleep_for(faults.delay);
  if (faults.failBefore) {
    auto r = server::problem(http::Problem::SimulatedFailureBefore,
                             "Sim-Fail: before — the request failed before execution started; nothing was executed or "
                             "stored. Retry with the same key.",
                             docs);
    r.headers.emplace_back("Retry-After", "1");
    gate::Result released;
    released.response = std::move(r);
    released.then = gate::Result::Then::Release;
    released.reason = "simulated failure before execution (Sim-Fail)";
    return released;
  }

  const bool failAfter = faults.failAfter;
  endpoint::Execution ex = buildResource(kind, body, nowSeconds(), failAfter);
  LedgerRow& row = ex.ledger;
  row.tenant = call.tenant();
  row.endpoint = req.method + " " + req.path;
  row.requestId = req.requestId;
  if (ticket) {
    row.key = ticket->scope().key;
    row.generation = ticket->generation();
    // The downstream call (the channel) gets the key in the strict sf-string form.
    if (auto sf = http::serializeSfString(ticket->scope().key)) row.payload["downstream_idempotency_key"] = *sf;
  }

  gate::Result result;
  result.resource = ex.id;
  if (failAfter) {
    result.response =
        server::problem(http::Problem::SimulatedFailureAfter,
                        "Sim-Fail: after — execution started and then failed: " + ex.id +
                            " may or may not have reached the channel (its ledger row says failed). This response "
                            "is stored; a retry with the same key replays it.",
                        docs);
  } else {
    result.response = gate::jsonResponse(kind.successStatus, ex.resource);
    result.response.headers.emplace_back("Location", std::string(kind.route) + "/" + ex.id);
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
      gate::Result unavailable;
      unavailable.response = storeUnavailable(docs);
      unavailable.outcome = gate::Outcome::Unavailable;
      return unavailable;
    }
    return result;
  }
  // The ledger row commits with the key's completion or not at all (the gate releases the key
  // when this transaction fails: nothing ran).
  result.options.resourceRef = ex.id;
  result.options.sameTransaction.push_back(insertStatement(row));
  return result;
}

gate::Result Service::echo(const server::Request& req) const {
  // vet() refused what is not JSON.
  gate::Result result;
  result.response = gate::jsonResponse(200, json{{"object", "echo"}, {"echo", text::parseClientJson(req.body).value}});
  return result;
}

gate::Result Service::listResources(const gate::Call& call) {
  const server::Request& req = call.request();
  const ResourceKind& kind = *kindForCollection(req.path);
  gate::Result result;
  result.outcome = gate::Outcome::Read;
  const std::string& docs = call.policy().docsUrl;
  auto badQuery = [&](const std::string& detail) {
    result.response = server::problem(http::Problem::BadQuery, detail, docs);
    result.outcome = gate::Outcome::BadQuery;
    return result;
  };
  int limit = 100;
  if (auto l = queryValue(req, "limit")) {
    int v = 0;
    const std::string_view text = *l;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || ptr != text.data() + text.size() || v < 1 || v > 1000)
      return badQuery("limit must be an integer from 1 to 1000.");
    limit = v;
  }
  auto key = queryValue(req, "idempotency_key");
  if (key) {
    const http::KeyParse parsed = http::parseIdempotencyKey(*key);
    if (!parsed.key) return badQuery("idempotency_key is not a valid Idempotency-Key: " + parsed.rule);
    key = *parsed.key;
  }
  try {
    auto data = m_host.pool().withRetry(
        [&](pg::Connection& c) { return listLedger(c, std::string(kind.object), call.tenant(), key, limit); });
    result.response = gate::jsonResponse(200, json{{"object", "list"}, {"data", std::move(data)}});
  } catch (const pg::Unavailable&) {
    result.response = storeUnavailable(docs);
    result.outcome = gate::Outcome::Unavailable;
  }
  return result;
}

gate::Result Service::getResource(const gate::Call& call) {
  const server::Request& req = call.request();
  const auto slash = req.path.rfind('/');
  const ResourceKind& kind = *kindForCollection(req.path.substr(0, slash));
  const std::string id = req.path.substr(slash + 1);
  const policy::Policy& policy = call.policy();
  gate::Result result;
  result.outcome = gate::Outcome::Read;
  try {
    std::optional<json> row;
    if (plausibleResourceId(id))
      row = m_host.pool().withRetry(
          [&](pg::Connection& c) { return findLedger(c, std::string(kind.object), call.tenant(), id); });
    if (row) {
      result.response = gate::jsonResponse(200, *row);
    } else {
      result.response = server::problem(
          http::Problem::NotFound,
          "No " + std::string(kind.object) + " " + id + " for this " +
              (policy.tenantHeader.empty() ? std::string("server") : policy.tenantHeader) + ".",
          policy.docsUrl);
      result.outcome = gate::Outcome::NotFound;
    }
  } catch (const pg::Unavailable&) {
    result.response = storeUnavailable(policy.docsUrl);
    result.outcome = gate::Outcome::Unavailable;
  }
  return result;
}

}  // namespace idem::endpoint
