#pragma once
// The transport's half of /metrics (Prometheus text exposition format 0.0.4): requests by tier,
// outcome and status, a latency histogram by outcome, and the transport's own counters. A host
// renders its gauges after these (core/endpoint/metrics.h).
#include <array>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "core/server/bodybudget.h"

namespace idem::server {

class Metrics {
 public:
  static constexpr std::array<double, 14> kBuckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                   0.1,    0.25,  0.5,    1,     2.5,  5,     10};

  /// Counts one finished request. Thread-safe.
  void observe(std::string_view tier, std::string_view outcome, int status, double seconds);
  /// The transport's counters, rendered from now on (set before serving).
  void attachTransport(const TransportStats* stats) { m_transport = stats; }
  /// Requests counted with this outcome (all tiers and statuses); for tests and the demo.
  [[nodiscard]] long long count(std::string_view outcome) const;

  /// Appends idem_requests_total and idem_request_duration_seconds.
  void renderRequests(std::string& out) const;
  /// Appends the idem_http_* counters (nothing before attachTransport).
  void renderTransport(std::string& out) const;

 private:
  struct Histogram {
    std::array<long long, kBuckets.size()> buckets{};
    long long count = 0;
    double sum = 0;
  };

  const TransportStats* m_transport = nullptr;
  mutable std::mutex m_mutex;
  std::map<std::tuple<std::string, std::string, int>, long long> m_requests;
  std::map<std::string, Histogram, std::less<>> m_latency;
};

/// A Prometheus label value, escaped.
[[nodiscard]] std::string metricLabel(std::string_view v);
/// A sample value as Prometheus prints it (%.6g).
[[nodiscard]] std::string metricNumber(double v);

}  // namespace idem::server
