#include "core/endpoint/accesslog.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/text/civiltime.h"

namespace idem::endpoint {
namespace {

std::string isoTime(long long ms) {
  std::string out;
  text::appendDateTime(out, ms, 'T', "Z");
  return out;
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
