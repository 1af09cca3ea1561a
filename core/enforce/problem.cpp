#include "core/enforce/problem.h"

#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>

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
    case Problem::TenantMalformed: return {400, "tenant-malformed", "Tenant header is malformed"};
    case Problem::BodyInvalid: return {400, "body-invalid", "Request body is not valid JSON"};
    case Problem::PayloadMismatch:
      return {422, "payload-mismatch", "Idempotency-Key reused with a different payload"};
    case Problem::KeyExpired: return {422, "key-expired", "Idempotency-Key expired"};
    case Problem::RequestInProgress: return {409, "request-in-progress", "Server processing previous request"};
    case Problem::StoreUnavailable: return {503, "store-unavailable", "Idempotency store unavailable"};
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
  r.body = body.dump();
  return r;
}

std::string httpDate(long long epochMs) {
  std::time_t t = static_cast<std::time_t>(epochMs / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  // Spelled out rather than strftime: a GUI process may have set a non-C locale.
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday], tm.tm_mday,
                kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

}  // namespace idem::enforce
