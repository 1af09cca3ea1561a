#pragma once
// Keeps the leases of running executions alive. A lease is how long a key stays with an executor
// that has gone silent (its process died); while the executor runs, this renews the lease every
// third of its length, so a request that runs longer than its lease — or its key's TTL — is never
// taken over or expired by a retry while its process is alive (docs/behaviour.md, "Rules that keep one
// execution"). One thread per enforcer, started on the first lease; all due leases in one statement.
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "core/store/keystore.h"

namespace idem::enforce {

class LeaseKeeper {
 public:
  explicit LeaseKeeper(store::KeyStore& store) : m_store(store) {}
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;
  ~LeaseKeeper();

  /// Starts renewing the lease `token` on `scope` until drop(token).
  void hold(const store::Scope& scope, const std::string& token, std::chrono::milliseconds lease);
  /// Stops renewing it (the execution completed, released or was abandoned).
  void drop(const std::string& token);

  /// Fault injection: while paused nothing is renewed, as when the process is stopped (SIGSTOP, a
  /// long pause) — its leases run out and a retry may take the key over. Tests use it to model a
  /// dead executor inside one process.
  void setPaused(bool paused);

  /// Leases renewed so far, and renewal statements that failed (store unreachable).
  [[nodiscard]] long long renewals() const;
  [[nodiscard]] long long failures() const;
  /// Times its thread woke up: to renew, at a new earliest lease, or for nothing.
  [[nodiscard]] long long wakeUps() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Held {
    store::LeaseHold lease;
    Clock::time_point due;
  };
  void run();

  store::KeyStore& m_store;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::map<std::string, Held> m_held;  // by lease token
  long long m_renewals = 0;
  long long m_failures = 0;
  long long m_wakeUps = 0;
  /// When the keeper's thread wakes by itself: max() asleep until a lease comes, min() awake.
  Clock::time_point m_sleepsUntil = Clock::time_point::min();
  bool m_stopping = false;
  bool m_paused = false;
  std::thread m_thread;  // last: started after the members it uses exist
};

}  // namespace idem::enforce
