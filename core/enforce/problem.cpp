#include "core/enforce/problem.h"

#include <nlohmann/json.hpp>

#include "core/text/civiltime.h"
#include "core/text/json_text.h"

namespace idem::enforce {
namespace {
struct Info {
  int status;
  std::string_view slug;
  std::string_view title;
};

Info info(Problem p) {
  switch (p) {
    case Problem::KeyMissing: return {400, "key-missing", "Idempotency-Key is missing"};
    case Problem::KeyMalformed: return {400, "key-malformed", "Idempotency-Key is malformed"};
    case Problem::TenantMalformed: return {400, "tenant-malformed", "Tenant is malformed"};
    case Problem::TenantMissing: return {400, "tenant-missing", "Tenant is missing"};
    case Problem::KeyNotHonoured: return {400, "key-not-honoured", "Idempotency-Key is not honoured on this route"};
    case Problem::BodyInvalid: return {400, "body-invalid", "Request body is not valid JSON"};
    case Problem::BodyTooDeep: return {400, "body-too-deep", "Request body is nested too deeply"};
    case Problem::PayloadMismatch:
      return {422, "payload-mismatch", "Idempotency-Key reused with a different payload"};
    case Problem::KeyExpired: return {422, "key-expired", "Idempotency-Key expired"};
    case Problem::RequestInProgress: return {409, "request-in-progress", "Server processing previous request"};
    case Problem::StoreUnavailable: return {503, "store-unavailable", "Idempotency store unavailable"};
    case Problem::DurabilityTooWeak:
      return {503, "durability-too-weak", "Idempotency store not durable enough for this operation"};
    case Problem::ExecutionAbandoned:
      return {500, "execution-abandoned", "Execution ended without a response"};
  }
  return {500, "internal", "Internal error"};
}
}  // namespace

int problemStatus(Problem p) { return info(p).status; }
std::string_view problemSlug(Problem p) { return info(p).slug; }

Response makeProblem(Problem p, std::string_view docsUrl, std::string_view detail, std::string_view key) {
  const Info i = info(p);
  nlohmann::json body{{"type", std::string(docsUrl) + "#" + std::string(i.slug)},
                      {"title", i.title},
                      {"status", i.status},
                      {"detail", detail}};
  if (!key.empty()) body["idempotency_key"] = key;
  Response r;
  r.status = i.status;
  r.headers.emplace_back("Content-Type", "application/problem+json");
  r.body = text::dumpJson(body);  // the detail may quote client bytes
  return r;
}

std::string httpDate(long long epochMs) {
  // Spelled out rather than strftime: a GUI process may have set a non-C locale.
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const text::CivilTime t = text::civilFromEpochMs(epochMs);
  std::string out;
  out.reserve(29);  // "Sun, 06 Nov 1994 08:49:37 GMT"
  out += kDays[t.weekday];
  out += ", ";
  text::appendPadded(out, t.day, 2);
  out += ' ';
  out += kMonths[t.month - 1];
  out += ' ';
  text::appendPadded(out, t.year, 4);
  out += ' ';
  text::appendClock(out, t);
  out += " GMT";
  return out;
}

}  // namespace idem::enforce
