#include "core/endpoint/accesslog.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

namespace idem::endpoint {
namespace {

std::string isoTime(long long ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
  return buf;
}

}  // namespace

std::string formatLogLine(const LogRecord& r) {
  nlohmann::json j{{"ts", isoTime(r.atMs)}, {"method", r.method}, {"path", r.path}, {"status", r.status}};
  auto put = [&](const char* name, const std::string& v) {
    if (!v.empty()) j[name] = v;
  };
  put("request_id", r.requestId);
  put("tier", r.tier);
  put("outcome", r.outcome);
  put("tenant", r.tenant);
  put("idempotency_key", r.key);
  if (r.generation > 0) j["generation"] = r.generation;
  if (r.replayed) j["replayed"] = true;
  put("resource", r.resource);
  j["latency_ms"] = std::round(r.latencyMs * 1000.0) / 1000.0;
  put("remote", r.remote);
  // Replace invalid UTF-8 (a client may send any bytes in a path or key) instead of throwing.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace idem::endpoint
