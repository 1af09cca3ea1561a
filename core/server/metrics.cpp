#include "core/server/metrics.h"

#include <cmath>
#include <cstdio>

namespace idem::server {

// Label values are ours (tier names from the policy, fixed outcomes), never a client's bytes;
// escaped anyway.
std::string metricLabel(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string metricNumber(double v) {
  char buf[32];
  // Whole numbers (byte gauges: 67108864) in full; %g would round them to six digits.
  if (v == std::floor(v) && std::fabs(v) < 9.0e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void Metrics::observe(std::string_view tier, std::string_view outcome, int status, double seconds) {
  std::lock_guard lock(m_mutex);
  ++m_requests[{std::string(tier), std::string(outcome), status}];
  auto it = m_latency.find(outcome);
  if (it == m_latency.end()) it = m_latency.emplace(std::string(outcome), Histogram{}).first;
  Histogram& h = it->second;
  for (std::size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) ++h.buckets[i];
  ++h.count;
  h.sum += seconds;
}

long long Metrics::count(std::string_view outcome) const {
  std::lock_guard lock(m_mutex);
  long long n = 0;
  for (const auto& [k, v] : m_requests)
    if (std::get<1>(k) == outcome) n += v;
  return n;
}

void Metrics::renderRequests(std::string& out) const {
  std::lock_guard lock(m_mutex);
  out += "# HELP idem_requests_total HTTP requests by policy tier, enforcement outcome and status.\n";
  out += "# TYPE idem_requests_total counter\n";
  for (const auto& [k, v] : m_requests) {
    const auto& [tier, outcome, status] = k;
    out += "idem_requests_total{tier=\"" + metricLabel(tier) + "\",outcome=\"" + metricLabel(outcome) + "\",status=\"" +
           std::to_string(status) + "\"} " + std::to_string(v) + "\n";
  }
  out += "# HELP idem_request_duration_seconds Time from the parsed request to the written response.\n";
  out += "# TYPE idem_request_duration_seconds histogram\n";
  for (const auto& [outcome, h] : m_latency) {
    const std::string l = "outcome=\"" + metricLabel(outcome) + "\"";
    for (std::size_t i = 0; i < kBuckets.size(); ++i)
      out += "idem_request_duration_seconds_bucket{" + l + ",le=\"" + metricNumber(kBuckets[i]) + "\"} " +
             std::to_string(h.buckets[i]) + "\n";
    out += "idem_request_duration_seconds_bucket{" + l + ",le=\"+Inf\"} " + std::to_string(h.count) + "\n";
    out += "idem_request_duration_seconds_sum{" + l + "} " + metricNumber(h.sum) + "\n";
    out += "idem_request_duration_seconds_count{" + l + "} " + std::to_string(h.count) + "\n";
  }
}

void Metrics::renderTransport(std::string& out) const {
  if (!m_transport) return;
  const TransportStats& t = *m_transport;
  auto line = [&](const char* name, const char* type, const char* help, const std::string& value) {
    out +=
        std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + value + "\n";
  };
  if (t.bodyBudget) {
    line("idem_http_body_bytes_buffered", "gauge",
         "Request-body bytes held in memory by all connections now (bounded by --max-buffered-body).",
         std::to_string(t.bodyBudget->used()));
    line("idem_http_body_bytes_limit", "gauge", "The --max-buffered-body budget in bytes.",
         std::to_string(t.bodyBudget->limit()));
  }
  line("idem_http_body_budget_refusals_total", "counter",
       "Requests answered 503 because their body did not fit the buffered-body budget.",
       std::to_string(t.refusedBodyBudget.load()));
  line("idem_http_connections_refused_total", "counter",
       "Connections refused at --max-connections (503) on any listener.", std::to_string(t.refusedServerFull.load()));
  line("idem_http_client_connections_refused_total", "counter",
       "Connections refused because their client address held --max-connections-per-client (429).",
       std::to_string(t.refusedClientFull.load()));
  line("idem_http_accept_pauses_total", "counter",
       "Times accepting paused because the process reached its file descriptor limit (EMFILE/ENFILE).",
       std::to_string(t.acceptPauses.load()));
  line("idem_http_loop_exceptions_total", "counter",
       "Exceptions caught on the event loop; each ended one connection, never the process.",
       std::to_string(t.loopExceptions.load()));
}

}  // namespace idem::server
