#pragma once
// The tenant is part of every live key's scope. A start whose tenant source differs from the
// one live keys were written under would give each retry a new tenant: every one of those keys
// would execute again. Noticed at start, from the recorded policies (docs/store.md, "Tenants").
#include <optional>
#include <string>

#include "core/policy/policy.h"
#include "core/store/pg.h"
#include "core/store/servicename.h"

namespace idem::store {

struct TenantScopeChange {
  std::string from;  // "header X-Tenant-Id", "" for an undeclared source
  std::string to;
  long long liveKeys = 0;  // unexpired keys written under `from`
  std::string lastExpiry;  // when the last of them expires (UTC)
};

/// The change `p` would make for `service`'s live keys, or nullopt when none was written under
/// another tenant source (another service's keys are never its concern). Reads every live key's
/// policy version once (a scan of idem.keys at start).
[[nodiscard]] std::optional<TenantScopeChange> tenantScopeChange(pg::Connection& conn, const policy::Policy& p,
                                                                 const std::string& service = kDefaultService);

/// What a refused start says: what would happen, and how to proceed deliberately.
[[nodiscard]] std::string describe(const TenantScopeChange& change);

}  // namespace idem::store
