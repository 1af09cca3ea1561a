#pragma once
// Prometheus metrics of the enforcement host (text exposition format 0.0.4): the transport's
// request counts and counters (core/server/metrics.h) and the gauges of the store pool, trace
// queue, claims, leases and replay cache.
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "core/enforce/replaycache.h"
#include "core/server/metrics.h"
#include "core/store/keystore.h"
#include "core/store/pool.h"
#include "core/store/replaybodies.h"

namespace idem::gate {

/// Values read at scrape time from the parts the server owns.
struct Gauges {
  store::Pool::Stats pool;
  std::size_t traceQueued = 0;
  long long traceWritten = 0;
  long long traceDropped = 0;
  long long traceRefused = 0;     // of the dropped: in rows the server refused
  long long traceRepaired = 0;    // written with a value made storable (U+FFFD)
  long long claims = 0;           // claims decided by the key store
  long long claimStatements = 0;  // statements they took: 1 each when the order was guessed right
  store::WriteBatchStats writeBatches;  // how new keys' claims and completions went together
  bool readUnseenFirst = false;   // keys new to the process are read first (a retry storm)
  long long leasesRenewed = 0;    // leases of running executions renewed
  long long leaseRenewalFailures = 0;
  long long completionBacklog = 0;  // executed responses waiting for the store to take their record
  long long completionsStoredLate = 0;
  int inFlight = 0;
  enforce::ReplayCache::Stats replayCache;
  store::ReplayBodies::Stats replayBodies;
  int conflictWaiters = 0;             // requests waiting for their key's original (on_conflict wait)
  long long conflictWaitsRefused = 0;  // retries answered 409 at once: the waiters' bound was reached
  int policyVersion = 0;  // the recorded version requests start under now
};

class Metrics : public server::Metrics {
 public:
  /// Counts one request a tier in observe passed on although enforcement decided `would`
  /// (idem_observed_total{route,would}). Thread-safe.
  void observed(std::string_view route, std::string_view would);
  /// Counts one request that matched another key's execution of the same request, by route and
  /// the tier's cross_key mode (idem_suspected_duplicates_total{route,mode}). Thread-safe.
  void suspectedDuplicate(std::string_view route, std::string_view mode);
  /// Counts one reload of the policy (SIGHUP): applied, or refused with the old one kept
  /// (idem_policy_reloads_total{result}). Thread-safe.
  void policyReload(bool applied) { ++(applied ? m_reloadsApplied : m_reloadsRefused); }

  /// The exposition text: requests, then these gauges, then the transport's counters.
  [[nodiscard]] std::string render(const Gauges& gauges) const;

 private:
  /// A counter by route and one more label.
  class ByRoute {
   public:
    void add(std::string_view route, std::string_view label);
    void render(std::string& out, const char* name, const char* help, const char* labelName) const;

   private:
    mutable std::mutex m_mutex;
    std::map<std::pair<std::string, std::string>, long long, std::less<>> m_counts;
  };
  ByRoute m_observed;
  ByRoute m_suspectedDuplicates;
  std::atomic<long long> m_reloadsApplied{0};
  std::atomic<long long> m_reloadsRefused{0};
};

}  // namespace idem::gate
