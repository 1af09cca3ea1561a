#pragma once
// The policies enforcers ran with, and the one in force, recorded in the store so the console,
// the sweeper and idemctl read them from the database alone (docs/design.md §4).
// idem.policies holds every policy an enforcer recorded at start (the service may append);
// idem.policy_choices says which of them is in force, per service, and only the admin or the
// schema's owner writes it (docs/store.md, "Roles"): a service never steers the sweeper.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/policy/policy.h"
#include "core/store/lockwait.h"
#include "core/store/pg.h"
#include "core/store/servicename.h"

namespace idem::store {


struct RecordedPolicy {
  int version = 0;
  std::string sha256;
  long long effectiveAtMs = 0;
  policy::Policy policy;
};

/// Records `p` unless an identical document is recorded already (its version is reused, so
/// enforcers with different policies starting in turn add no rows); returns its version.
/// When nothing is chosen for `service` yet and this connection's role may choose (the admin or
/// the owner, never idem_service), chooses it too: a fresh store started by its operator (the
/// demo, a first `serve`) needs no extra step. Waits at most `lockTimeout` for the policy lock;
/// throws LockWaitTimeout naming its holder.
int recordPolicy(pg::Connection& conn, const policy::Policy& p,
                 std::chrono::milliseconds lockTimeout = kDefaultLockTimeout,
                 const std::string& service = kDefaultService);

/// One row of the choice history, newest first.
struct PolicyChoice {
  long long id = 0;
  int version = 0;
  std::string chosenBy;
  long long chosenAtMs = 0;
  std::string document;  // the chosen version's JSON as PostgreSQL prints the jsonb
  std::string source;
};
[[nodiscard]] std::vector<PolicyChoice> policyChoices(pg::Connection& conn, const std::string& service, int limit = 50);
/// Every service with a chosen policy.
[[nodiscard]] std::vector<std::string> servicesWithChoice(pg::Connection& conn);

/// Makes recorded version `version` the policy in force for `service`. Checks first that it
/// parses and gives retentions (policy::PolicyError / RetentionError otherwise), so a choice
/// the sweeper cannot follow is refused at the door. Needs the admin or the owner (42501).
void activatePolicyVersion(pg::Connection& conn, int version, const std::string& service = kDefaultService,
                           std::chrono::milliseconds lockTimeout = kDefaultLockTimeout);
/// Records `p` (reusing an identical recorded document) and makes it the policy in force.
int activatePolicy(pg::Connection& conn, const policy::Policy& p, const std::string& service = kDefaultService,
                   std::chrono::milliseconds lockTimeout = kDefaultLockTimeout);

/// The policy in force for `service`: its newest choice whose document parses (older choices
/// stand in for one that does not), or nullopt when none was ever chosen.
[[nodiscard]] std::optional<RecordedPolicy> policyInForce(pg::Connection& conn,
                                                          const std::string& service = kDefaultService);

/// The policy in force as stored, unparsed: for readers that take what they understand of a
/// document a newer version may have written (the console's filters).
struct RecordedDocument {
  int version = 0;
  std::string document;  // the JSON as PostgreSQL prints the jsonb
};
[[nodiscard]] std::optional<RecordedDocument> policyDocumentInForce(pg::Connection& conn,
                                                                    const std::string& service = kDefaultService);

/// A given version (the one in force when a key was written).
[[nodiscard]] std::optional<RecordedPolicy> policyVersion(pg::Connection& conn, int version);

}  // namespace idem::store
