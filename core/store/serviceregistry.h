#pragma once
// Which services ran on a store (idem.services, migration 0025): each `serve`/`proxy` records
// itself at start, so `idemctl status`, `idemctl tiers` and the console can list the services
// without scanning the keys.
#include <string>
#include <vector>

#include "core/store/pg.h"

namespace idem::store {

struct ServiceRecord {
  std::string name;
  int lastPolicyVersion = 0;  // the policy it last started with (0: none recorded)
  long long startedAtMs = 0;  // its last start
  int chosenVersion = 0;      // its policy in force (idem.policy_choices); 0: none chosen
};

/// Records that `service` starts with policy version `version`. Best effort: a role that may not
/// write idem.services (the admin) or a read-only store leaves it unrecorded, and the start goes
/// on. Throws pg::Unavailable only.
void registerService(pg::Connection& conn, const std::string& service, int version);

/// Every service that started here or has a chosen policy, by name.
[[nodiscard]] std::vector<ServiceRecord> knownServices(pg::Connection& conn);

}  // namespace idem::store
