#include "core/store/policystore.h"

#include "core/store/transaction.h"

namespace idem::store {
namespace {

// Arbitrary constant shared by every enforcer (idem.migrations uses 0x1de30001).
constexpr long long kPolicyLock = 0x1de30002;

constexpr const char* kColumns =
    "version, sha256, document::text AS document, source, "
    "(extract(epoch FROM effective_at) * 1000)::bigint AS effective_ms";

// The one definition of "in force": the highest version.
constexpr const char* kInForce = " FROM idem.policies ORDER BY version DESC LIMIT 1";

std::optional<RecordedPolicy> fromResult(const pg::Result& r) {
  if (r.rows() == 0) return std::nullopt;
  RecordedPolicy out;
  out.version = static_cast<int>(r.integer(0, "version"));
  out.sha256 = r.str(0, "sha256");
  out.effectiveAtMs = r.integer(0, "effective_ms");
  out.policy = policy::parsePolicy(r.str(0, "document"), "policy v" + std::to_string(out.version) + " (" +
                                                             r.str(0, "source") + ")");
  return out;
}

}  // namespace

int recordPolicy(pg::Connection& conn, const policy::Policy& p) {
  const std::string sha = p.sha256();
  // Serialise concurrent enforcers starting with policies: one version per change. An
  // advisory lock, not LOCK TABLE, whose SHARE ROW EXCLUSIVE mode needs UPDATE or DELETE on
  // the table — which idem_service, appending policies only, must not hold. Transaction-scoped:
  // behind a pooler in transaction mode nothing may outlive the transaction.
  pg::Transaction tx(conn);
  conn.exec("SELECT pg_advisory_xact_lock($1)", {kPolicyLock});
  auto latest = conn.exec("SELECT version, sha256 FROM idem.policies ORDER BY version DESC LIMIT 1");
  int version = 0;
  if (latest.rows() == 1 && latest.str(0, "sha256") == sha) {
    version = static_cast<int>(latest.integer(0, "version"));
  } else {
    version = static_cast<int>(
        conn.exec("INSERT INTO idem.policies (sha256, document, source) VALUES ($1, $2::jsonb, $3) "
                  "RETURNING version",
                  {sha, p.document.dump(), p.source})
            .integer(0, "version"));
  }
  tx.commit();
  return version;
}

std::optional<RecordedPolicy> policyInForce(pg::Connection& conn) {
  return fromResult(conn.exec(std::string("SELECT ") + kColumns + kInForce));
}

std::optional<RecordedDocument> policyDocumentInForce(pg::Connection& conn) {
  auto r = conn.exec(std::string("SELECT version, document::text AS document") + kInForce);
  if (r.rows() == 0) return std::nullopt;
  return RecordedDocument{static_cast<int>(r.integer(0, "version")), r.str(0, "document")};
}

std::optional<RecordedPolicy> policyVersion(pg::Connection& conn, int version) {
  return fromResult(
      conn.exec(std::string("SELECT ") + kColumns + " FROM idem.policies WHERE version = $1", {version}));
}

}  // namespace idem::store
