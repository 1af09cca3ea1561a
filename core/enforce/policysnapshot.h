#pragma once
// The policy in force as an immutable snapshot. A request takes the snapshot once, at its start,
// and keeps it until it ends (its ticket holds it), so a reload (SIGHUP: docs/proxy.md,
// "Reloading") that swaps in another policy never changes a request halfway through nor leaves
// a tier pointer dangling.
#include <atomic>
#include <cstdint>
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
/// after. Thread-safe. Taking it is on every request's path (a replay from memory is a few
/// microseconds), so a reader takes no lock while nothing changed: each thread keeps the last
/// snapshot it took with the stamp it had, and only a changed stamp (a reload) sends it to the
/// mutex. `idemctl bench --snapshot-cost` measures it against a snapshot held for the whole run.
class PolicyInForce {
 public:
  explicit PolicyInForce(PolicyPtr first);
  [[nodiscard]] PolicyPtr current() const;
  void replace(PolicyPtr next);

 private:
  mutable std::mutex m_mutex;
  PolicyPtr m_current;                 // guarded by m_mutex
  std::atomic<std::uint64_t> m_stamp;  // changes with m_current; unique across every PolicyInForce
};

}  // namespace idem::enforce
