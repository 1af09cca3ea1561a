#pragma once
// A tier's `durability: synchronous` held against what the store gives (store::Durability):
// on a weaker store the tier is refused (503 on its routes, saying why) or served with a
// warning (log, metric, /healthz), as the tier's `on_weaker_store` says.
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/enforce/problem.h"
#include "core/policy/policy.h"
#include "core/store/durabilitywatch.h"

namespace idem::enforce {

class DurabilityGate {
 public:
  using Log = std::function<void(const std::string&)>;
  DurabilityGate(store::Pool& pool, const Log& log) : m_watch(pool), m_log(log) {}

  /// The 503 for a request on `tier` while the store is weaker than it asks and it refuses;
  /// nullopt when it may run (it asks for nothing, the store gives it, the tier only warns,
  /// or the store could not be read: the claim then reports the store's trouble).
  [[nodiscard]] std::optional<Response> check(const policy::Tier& tier, const std::string& docsUrl);

  /// Per tier that asks for synchronous durability: requests refused, and served on a weaker store.
  struct Counts {
    long long refused = 0;
    long long servedWeaker = 0;
  };
  [[nodiscard]] std::map<std::string, Counts> counts() const;
  [[nodiscard]] store::DurabilityWatch& watch() { return m_watch; }

 private:
  store::DurabilityWatch m_watch;
  const Log& m_log;
  mutable std::mutex m_mutex;
  std::map<std::string, Counts> m_counts;
  std::map<std::string, std::string> m_lastSaid;  // per tier: what the log said last (said again on change)
};

/// What a tier's durability setting means on this store: "" when it is met (or asks for
/// nothing), else a sentence for /healthz and `idemctl status`.
[[nodiscard]] std::string durabilityShortfall(const policy::Tier& tier, const store::Durability& d);

}  // namespace idem::enforce
