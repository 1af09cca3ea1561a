#pragma once
// The policy in force as an immutable snapshot. A request takes the snapshot once, at its start,
// and keeps it until it ends (its ticket holds it), so a reload (SIGHUP: docs/proxy.md,
// "Reloading") that swaps in another policy never changes a request halfway through nor leaves
// a tier pointer dangling.
#include <memory>
#include <mutex>

#include "core/policy/policy.h"

namespace idem::enforce {

/// One policy as enforced: the document and the version the store recorded it under.
struct PolicySnapshot {
  policy::Policy policy;
  int version = 0;  // idem.policies.version; 0: not recorded (a library caller's)
};
using PolicyPtr = std::shared_ptr<const PolicySnapshot>;

[[nodiscard]] inline PolicyPtr makeSnapshot(policy::Policy policy, int version) {
  return std::make_shared<const PolicySnapshot>(PolicySnapshot{std::move(policy), version});
}

/// Where requests take the snapshot in force; replace() swaps it for the requests that start
/// after. Thread-safe. A mutex rather than std::atomic<std::shared_ptr>: the sanitizer builds'
/// clang and ThreadSanitizer both understand it, and an uncontended lock plus a reference count
/// is a few tens of nanoseconds against a request's microseconds (tests/bench/RESULTS.md).
class PolicyInForce {
 public:
  explicit PolicyInForce(PolicyPtr first) : m_current(std::move(first)) {}
  [[nodiscard]] PolicyPtr current() const {
    std::lock_guard lock(m_mutex);
    return m_current;
  }
  void replace(PolicyPtr next) {
    std::lock_guard lock(m_mutex);
    m_current.swap(next);
    // `next` (the old snapshot) is released after the lock: its last reader may be long gone.
  }

 private:
  mutable std::mutex m_mutex;
  PolicyPtr m_current;
};

}  // namespace idem::enforce
