#pragma once
// The policy in force, recorded in the store so the console and idemctl read it from the
// database alone (docs/design.md §4). Each change of policy is a new version; the highest is in force.
#include <optional>
#include <string>

#include "core/policy/policy.h"
#include "core/store/pg.h"

namespace idem::store {

struct RecordedPolicy {
  int version = 0;
  std::string sha256;
  long long effectiveAtMs = 0;
  policy::Policy policy;
};

/// Records `p` as the policy in force unless it already is; returns its version.
int recordPolicy(pg::Connection& conn, const policy::Policy& p);

/// The policy in force, or nullopt when none was ever recorded.
[[nodiscard]] std::optional<RecordedPolicy> policyInForce(pg::Connection& conn);

/// The policy in force as stored, unparsed: for readers that take what they understand of a
/// document a newer version may have written (the console's filters, the sweeper's retentions).
struct RecordedDocument {
  int version = 0;
  std::string document;  // the JSON as PostgreSQL prints the jsonb
};
[[nodiscard]] std::optional<RecordedDocument> policyDocumentInForce(pg::Connection& conn);

/// A given version (the one in force when a key was written).
[[nodiscard]] std::optional<RecordedPolicy> policyVersion(pg::Connection& conn, int version);

}  // namespace idem::store
