#pragma once
// Responses whose work ran but whose record the store refused for longer than complete()'s own
// retries. Without a backlog, a long outage ends the only copy of the answer with the request:
// the key stays processing, its lease lapses, and the first retry once the store is back takes
// the key over and runs the work a second time. Kept here, each response is written as soon as
// the store answers (tried every quarter second), its lease is kept (the lease keeper's renewal
// revives a lapsed lease nobody took), and meanwhile a retry reaching this process is answered
// from here. What remains is lost only with the process, and logged when it stops.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/enforce/leasekeeper.h"
#include "core/store/keystore.h"

namespace idem::enforce {

/// One execution's record waiting for the store: what to write, and what to say when written.
struct PendingCompletion {
  store::CompleteRequest request;  // scope, lease token and the response as it is replayed
  std::string fingerprint;         // a retry with another payload is a mismatch, not a replay
  int generation = 0;
  long long expiresAtMs = 0;       // the key's expiry as the claim saw it
  std::chrono::steady_clock::time_point ranAt;
  // For the execution's trace row.
  std::string tier;
  bool afterExpiry = false;
  bool abandoned = false;
  bool outcomeUnknown = false;  // the answer stands for an execution nobody saw end (the proxy)
  bool notRunAfterTakeover = false;  // … a stopped holder's, answered without running it again
};

struct BacklogLimits {
  std::size_t entries = 10'000;
  std::size_t bodyBytes = std::size_t{64} << 20;
  std::chrono::hours maxAge{24};  // then the process gives up on the record (logged)
};

class CompletionBacklog {
 public:
  /// Called once a pending record is stored (to trace the execution), with a note saying how late.
  using Stored = std::function<void(const PendingCompletion&, const store::CompleteResult&, const std::string& note)>;
  using Log = std::function<void(const std::string&)>;
  CompletionBacklog(store::KeyStore& store, LeaseKeeper& leases, Stored stored, Log log, BacklogLimits limits = {});
  CompletionBacklog(const CompletionBacklog&) = delete;
  CompletionBacklog& operator=(const CompletionBacklog&) = delete;
  /// Tries each record once more, then logs every one still unwritten.
  ~CompletionBacklog();

  /// Keeps `pending` until the store takes it. False when the backlog is full (the caller logs).
  bool adopt(PendingCompletion pending);
  /// The record waiting for `scope`, if any: a retry here is answered from it.
  [[nodiscard]] std::optional<PendingCompletion> find(const store::Scope& scope) const;
  [[nodiscard]] std::size_t size() const;
  /// Records this backlog has written after the outage that put them here.
  [[nodiscard]] long long storedLate() const;

 private:
  using Clock = std::chrono::steady_clock;
  using ScopeKey = std::tuple<std::string, std::string, std::string>;
  static ScopeKey keyOf(const store::Scope& s) { return {s.tenant, s.endpoint, s.key}; }
  void run();
  /// One attempt at every record; the store is called without the lock held.
  void flushOnce();

  store::KeyStore& m_store;
  LeaseKeeper& m_leases;
  Stored m_stored;
  Log m_log;
  BacklogLimits m_limits;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::map<ScopeKey, PendingCompletion> m_pending;
  std::atomic<std::size_t> m_count{0};  // begin() checks this before taking the lock
  std::size_t m_bodyBytes = 0;
  long long m_storedLate = 0;
  bool m_stopping = false;
  std::thread m_thread;  // last: started after the members it uses exist
};

}  // namespace idem::enforce
