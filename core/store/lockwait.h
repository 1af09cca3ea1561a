#pragma once
// Waits for a lock at start, bounded: an enforcer, migrate or the sweeper that cannot get a lock
// within the timeout stops and names who holds it, instead of hanging behind any role that can
// take the same lock (docs/store.md, "Roles").
#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/store/pg.h"

namespace idem::store {

/// How long a start waits for a lock unless told otherwise (--lock-timeout).
inline constexpr std::chrono::milliseconds kDefaultLockTimeout{10000};

/// A lock was not granted within the timeout. what() says which lock and who holds it.
class LockWaitTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// SET LOCAL lock_timeout inside the caller's transaction (zero: wait forever, as PostgreSQL does).
void limitLockWait(pg::Connection& conn, std::chrono::milliseconds timeout);

/// Takes the transaction-scoped advisory lock `key` (pg_advisory_xact_lock) in the caller's
/// transaction, waiting at most `timeout`. On expiry throws pg::QueryError 55P03 (the
/// transaction is aborted); call lockWaitTimeout() after rolling back to say who held it.
void advisoryXactLock(pg::Connection& conn, long long key, std::chrono::milliseconds timeout);

/// True for the error a lock_timeout raises (SQLSTATE 55P03).
[[nodiscard]] bool isLockTimeout(const pg::QueryError& e);

/// The error to throw once a wait for `what` timed out: names the sessions holding the
/// advisory lock `advisoryKey` and, with includeRelations (DDL, the sweeper's deletes), any lock
/// on a relation of schema idem — pid, user, application_name and since when (pg_locks joined
/// with pg_stat_activity). Call it outside the aborted transaction.
[[nodiscard]] LockWaitTimeout lockWaitTimeout(pg::Connection& conn, std::string_view what,
                                              std::chrono::milliseconds waited, long long advisoryKey,
                                              bool includeRelations = false);

}  // namespace idem::store
