#include "core/server/accesslog.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/text/civiltime.h"
#include "core/text/json_text.h"

namespace idem::server {
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
  put("would", r.would);
  put("detail", r.detail);
  put("tenant", r.tenant);
  put("idempotency_key", r.key);
  if (r.generation > 0) j["generation"] = r.generation;
  if (r.replayed) j["replayed"] = true;
  put("resource", r.resource);
  j["latency_ms"] = std::round(r.latencyMs * 1000.0) / 1000.0;
  put("remote", r.remote);
  return text::dumpJson(j) + "\n";  // a client may send any bytes in a path or key
}

void logInternalError(std::string_view requestId, std::string_view during, std::string_view error) {
  const long long now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  nlohmann::json j{{"ts", isoTime(now)}, {"level", "error"}, {"during", during}, {"error", error}};
  if (!requestId.empty()) j["request_id"] = requestId;
  const std::string line = text::dumpJson(j) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);  // one call: stdio locks it, lines never interleave
}

}  // namespace idem::server
