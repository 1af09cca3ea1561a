#include "core/store/policystore.h"

#include "core/store/sweeper.h"
#include "core/store/transaction.h"

namespace idem::store {
namespace {

// Arbitrary constant shared by every enforcer (idem.migrations uses 0x1de30001).
constexpr long long kPolicyLock = 0x1de30002;
constexpr const char* kPolicyLockName = "the policy lock (advisory key 0x1de30002, taken by enforcers at start)";

constexpr const char* kColumns =
    "version, sha256, document::text AS document, source, "
    "(extract(epoch FROM effective_at) * 1000)::bigint AS effective_ms";

RecordedPolicy fromRow(const pg::Result& r, int row) {
  RecordedPolicy out;
  out.version = static_cast<int>(r.integer(row, "version"));
  out.sha256 = r.str(row, "sha256");
  out.effectiveAtMs = r.integer(row, "effective_ms");
  out.policy = policy::parsePolicy(r.str(row, "document"),
                                   "policy v" + std::to_string(out.version) + " (" + r.str(row, "source") + ")");
  return out;
}

/// Runs fn in a transaction holding the policy lock, waiting for it at most `timeout`.
template <typename Fn>
auto underPolicyLock(pg::Connection& conn, std::chrono::milliseconds timeout, Fn&& fn) {
  try {
    pg::Transaction tx(conn);
    advisoryXactLock(conn, kPolicyLock, timeout);
    auto result = fn();
    tx.commit();
    return result;
  } catch (const pg::QueryError& e) {
    if (!isLockTimeout(e)) throw;
  }
  throw lockWaitTimeout(conn, kPolicyLockName, timeout, kPolicyLock);
}

/// The version of a recorded document identical to `p`, or records it. In the caller's transaction.
int findOrInsert(pg::Connection& conn, const policy::Policy& p) {
  const std::string sha = p.sha256();
  auto same = conn.exec("SELECT version FROM idem.policies WHERE sha256 = $1 ORDER BY version DESC LIMIT 1", {sha});
  if (same.rows() == 1) return static_cast<int>(same.integer(0, "version"));
  return static_cast<int>(conn.exec("INSERT INTO idem.policies (sha256, document, source) VALUES ($1, $2::jsonb, $3) "
                                    "RETURNING version",
                                    {sha, p.document.dump(), p.source})
                              .integer(0, "version"));
}

// Column privilege: the admin holds INSERT (service, version), the owner everything.
bool mayChoose(pg::Connection& conn) {
  return conn.exec("SELECT has_column_privilege('idem.policy_choices', 'version', 'INSERT') AS ok").boolean(0, "ok");
}

/// Refused before anything is checked or recorded: the service role learns nothing else.
void requireMayChoose(pg::Connection& conn) {
  if (!mayChoose(conn))
    throw pg::QueryError("permission denied to choose the policy in force (INSERT on idem.policy_choices)", "42501");
}

void insertChoice(pg::Connection& conn, int version, const std::string& service) {
  conn.exec("INSERT INTO idem.policy_choices (service, version) VALUES ($1, $2)", {service, version});
}

/// Throws PolicyError / RetentionError when the sweeper or an enforcer could not follow it.
void checkFollowable(const std::string& document, const std::string& source) {
  (void)policy::parsePolicy(document, source);
  (void)retentionsFromPolicy(document, source);
}

}  // namespace

int recordPolicy(pg::Connection& conn, const policy::Policy& p, std::chrono::milliseconds lockTimeout,
                 const std::string& service) {
  // Serialise concurrent enforcers starting with policies: one version per document. An
  // advisory lock, not LOCK TABLE, whose SHARE ROW EXCLUSIVE mode needs UPDATE or DELETE on
  // the table — which idem_service, appending policies only, must not hold. Transaction-scoped:
  // behind a pooler in transaction mode nothing may outlive the transaction.
  return underPolicyLock(conn, lockTimeout, [&] {
    const int version = findOrInsert(conn, p);
    if (mayChoose(conn) &&
        conn.exec("SELECT 1 FROM idem.policy_choices WHERE service = $1 LIMIT 1", {service}).rows() == 0)
      insertChoice(conn, version, service);
    return version;
  });
}

std::vector<PolicyChoice> policyChoices(pg::Connection& conn, const std::string& service, int limit) {
  auto r = conn.exec(
      "SELECT c.id, c.version, c.chosen_by, (extract(epoch FROM c.chosen_at) * 1000)::bigint AS chosen_ms, "
      "p.document::text AS document, p.source "
      "FROM idem.policy_choices c JOIN idem.policies p ON p.version = c.version "
      "WHERE c.service = $1 ORDER BY c.id DESC LIMIT $2",
      {service, limit});
  std::vector<PolicyChoice> out;
  for (int i = 0; i < r.rows(); ++i)
    out.push_back({r.integer(i, "id"), static_cast<int>(r.integer(i, "version")), r.str(i, "chosen_by"),
                   r.integer(i, "chosen_ms"), r.str(i, "document"), r.str(i, "source")});
  return out;
}

std::vector<std::string> servicesWithChoice(pg::Connection& conn) {
  auto r = conn.exec("SELECT DISTINCT service FROM idem.policy_choices ORDER BY service");
  std::vector<std::string> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back(r.str(i, "service"));
  return out;
}

void activatePolicyVersion(pg::Connection& conn, int version, const std::string& service,
                           std::chrono::milliseconds lockTimeout) {
  requireMayChoose(conn);
  underPolicyLock(conn, lockTimeout, [&] {
    auto r = conn.exec("SELECT document::text AS document, source FROM idem.policies WHERE version = $1", {version});
    if (r.rows() == 0)
      throw policy::PolicyError("policy version " + std::to_string(version) +
                                " is not recorded in this store (idemctl policy list shows the versions)");
    checkFollowable(r.str(0, "document"), "policy version " + std::to_string(version));
    insertChoice(conn, version, service);
    return 0;
  });
}

int activatePolicy(pg::Connection& conn, const policy::Policy& p, const std::string& service,
                   std::chrono::milliseconds lockTimeout) {
  requireMayChoose(conn);
  checkFollowable(p.document.dump(), p.source);
  return underPolicyLock(conn, lockTimeout, [&] {
    const int version = findOrInsert(conn, p);
    insertChoice(conn, version, service);
    return version;
  });
}

std::optional<RecordedPolicy> policyInForce(pg::Connection& conn, const std::string& service) {
  for (const auto& choice : policyChoices(conn, service)) {
    auto r = conn.exec(std::string("SELECT ") + kColumns + " FROM idem.policies WHERE version = $1", {choice.version});
    try {
      return fromRow(r, 0);
    } catch (const policy::PolicyError&) {  // an older choice stands in (the sweeper says so)
    }
  }
  return std::nullopt;
}

std::optional<RecordedDocument> policyDocumentInForce(pg::Connection& conn, const std::string& service) {
  for (const auto& choice : policyChoices(conn, service)) {
    try {
      (void)retentionsFromPolicy(choice.document, "");
      return RecordedDocument{choice.version, choice.document};
    } catch (const RetentionError&) {
    }
  }
  return std::nullopt;
}

std::optional<RecordedPolicy> policyVersion(pg::Connection& conn, int version) {
  auto r = conn.exec(std::string("SELECT ") + kColumns + " FROM idem.policies WHERE version = $1", {version});
  if (r.rows() == 0) return std::nullopt;
  return fromRow(r, 0);
}

}  // namespace idem::store
