#pragma once
// What the worker's ping reads about a hot standby (dbworker.cpp) and the session keeps for
// the status bar (ui/connection/replication.h words it). Here, below connection/, because the
// session holds it.
namespace idem::ui {

struct ReplicationState {
  bool known = false;     ///< a ping has read it since the connection opened
  bool standby = false;   ///< pg_is_in_recovery() at that ping
  double dataAgeS = -1;   ///< now() - pg_last_xact_replay_timestamp(); < 0: nothing replayed yet
};

/// The ping's statement: one round trip for the round-trip time and the replication state.
inline constexpr const char* kReplicationPingSql =
    "SELECT pg_is_in_recovery() AS standby, "
    "coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8, -1) AS data_age_s";

}  // namespace idem::ui
