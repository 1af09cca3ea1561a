#include "core/store/lockwait.h"

namespace idem::store {

void limitLockWait(pg::Connection& conn, std::chrono::milliseconds timeout) {
  // set_config, not SET: a bound parameter. is_local: ends with the transaction.
  conn.exec("SELECT set_config('lock_timeout', $1, true)", {std::to_string(timeout.count()) + "ms"});
}

void advisoryXactLock(pg::Connection& conn, long long key, std::chrono::milliseconds timeout) {
  limitLockWait(conn, timeout);
  conn.exec("SELECT pg_advisory_xact_lock($1)", {key});
}

bool isLockTimeout(const pg::QueryError& e) { return e.sqlstate() == "55P03"; }

LockWaitTimeout lockWaitTimeout(pg::Connection& conn, std::string_view what, std::chrono::milliseconds waited,
                                long long advisoryKey, bool includeRelations) {
  std::string message = "waited " + std::to_string(waited.count()) + " ms for " + std::string(what) +
                        " (lock_timeout; set --lock-timeout to wait longer)";
  try {
    // A bigint advisory key is split into classid (high half) and objid (low half), objsubid 1.
    // Other sessions' activity columns are NULL without pg_read_all_stats; pid, user and
    // application_name are always visible.
    auto r = conn.exec(
        R"sql(SELECT DISTINCT ON (l.pid) l.pid, coalesce(a.usename, '?') AS usename,
                 coalesce(a.application_name, '') AS app,
                 coalesce(to_char(coalesce(a.xact_start, a.backend_start), 'YYYY-MM-DD HH24:MI:SS TZ'),
                          'unknown (needs pg_read_all_stats)') AS since,
                 coalesce(a.state, '?') AS state,
                 CASE WHEN l.locktype = 'advisory' THEN 'advisory lock'
                      ELSE l.mode || ' on ' || (SELECT n.nspname || '.' || c.relname FROM pg_class c
                                 JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = l.relation) END AS what
            FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.granted AND l.pid <> pg_backend_pid()
             AND ((l.locktype = 'advisory' AND l.classid::bigint = ($1::bigint >> 32)
                   AND l.objid::bigint = ($1::bigint & 4294967295) AND l.objsubid = 1)
               OR ($2::boolean AND l.locktype = 'relation'
                   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                   AND l.relation IN (SELECT oid FROM pg_class WHERE relnamespace = to_regnamespace('idem'))))
           ORDER BY l.pid, l.locktype = 'advisory' DESC)sql",
        {advisoryKey, includeRelations ? "true" : "false"});
    if (r.rows() == 0) {
      message += "; its holder is gone or not visible to this role";
    } else {
      message += "; held by";
      for (int i = 0; i < r.rows(); ++i)
        message += std::string(i ? ";" : "") + " pid " + r.str(i, "pid") + " (user " + r.str(i, "usename") +
                   ", application_name '" + r.str(i, "app") + "', since " + r.str(i, "since") + ", " +
                   r.str(i, "state") + ", " + r.str(i, "what") + ")";
      message += ". End that session (SELECT pg_terminate_backend(pid)) or wait for it, then start again";
    }
  } catch (const pg::Error& e) {
    message += std::string("; could not read who holds it: ") + e.what();
  }
  return LockWaitTimeout(message);
}

}  // namespace idem::store
