#pragma once
// What the worker's ping reads about replication — on a hot standby how old its data is, on a
// primary which standbys follow it (dbworker.cpp) and the session keeps for
// the status bar (ui/connection/replication.h words it). Here, below connection/, because the
// session holds it.
namespace idem::ui {

struct ReplicationState {
  bool known = false;     ///< a ping has read it since the connection opened
  bool standby = false;   ///< pg_is_in_recovery() at that ping
  double dataAgeS = -1;   ///< now() - pg_last_xact_replay_timestamp(); < 0: nothing replayed yet
  int standbys = 0;       ///< on a primary: walsenders in pg_stat_replication
  int syncStandbys = -1;  ///< of them synchronous; -1 when this role cannot see sync_state
};

/// The ping's statement: one round trip for the round-trip time and the replication state.
inline constexpr const char* kReplicationPingSql =
    "SELECT pg_is_in_recovery() AS standby, "
    "coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8, -1) AS data_age_s, "
    "(SELECT count(*) FROM pg_stat_replication) AS standbys, "
    "CASE WHEN EXISTS (SELECT 1 FROM pg_stat_replication WHERE sync_state IS NULL) THEN -1 "
    "ELSE (SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')) END AS sync_standbys";

}  // namespace idem::ui
