#pragma once
// Prometheus metrics of the endpoint (text exposition format 0.0.4): requests by tier, outcome
// and status, a latency histogram by outcome, and gauges of the store pool and trace queue.
#include <array>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

#include "core/endpoint/bodybudget.h"
#include "core/enforce/replaycache.h"
#include "core/store/pool.h"

namespace idem::endpoint {

/// Values read at scrape time from the parts the server owns.
struct Gauges {
  store::Pool::Stats pool;
  std::size_t traceQueued = 0;
  long long traceWritten = 0;
  long long traceDropped = 0;
  long long traceRefused = 0;   // of the dropped: in rows the server refused
  long long traceRepaired = 0;  // written with a value made storable (U+FFFD)
  long long claims = 0;           // claims decided by the key store
  long long claimStatements = 0;  // statements they took: 1 each when the order was guessed right
  bool readUnseenFirst = false;   // keys new to the process are read first (a retry storm)
  long long leasesRenewed = 0;     // leases of running executions renewed
  long long leaseRenewalFailures = 0;
  long long completionBacklog = 0;   // executed responses waiting for the store to take their record
  long long completionsStoredLate = 0;
  int inFlight = 0;
  enforce::ReplayCache::Stats replayCache;
};

class Metrics {
 public:
  static constexpr std::array<double, 14> kBuckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                   0.1,    0.25,  0.5,    1,     2.5,  5,     10};

  /// Counts one finished request. Thread-safe.
  void observe(std::string_view tier, std::string_view outcome, int status, double seconds);
  /// The exposition text.
  [[nodiscard]] std::string render(const Gauges& gauges) const;
  /// The server's transport counters, rendered with the rest from now on (set before serving).
  void attachTransport(const TransportStats* stats) { m_transport = stats; }
  /// Requests counted with this outcome (all tiers and statuses); for tests and the demo.
  [[nodiscard]] long long count(std::string_view outcome) const;

 private:
  struct Histogram {
    std::array<long long, kBuckets.size()> buckets{};
    long long count = 0;
    double sum = 0;
  };
  void renderTransport(std::string& out) const;

  const TransportStats* m_transport = nullptr;
  mutable std::mutex m_mutex;
  std::map<std::tuple<std::string, std::string, int>, long long> m_requests;
  std::map<std::string, Histogram, std::less<>> m_latency;
};

}  // namespace idem::endpoint
