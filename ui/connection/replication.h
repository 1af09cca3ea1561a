#pragma once
// The console on a hot standby: how old the data it shows is, and whether the standby was
// promoted while the console looked at it. Read by the worker's ping (dbworker.cpp), shown by
// the status bar (statuswidget.cpp).
#include <QString>

namespace idem::ui {

struct ServerInfo;

struct ReplicationState {
  bool known = false;     ///< a ping has read it since the connection opened
  bool standby = false;   ///< pg_is_in_recovery() at that ping
  double dataAgeS = -1;   ///< now() - pg_last_xact_replay_timestamp(); < 0: nothing replayed yet
};

/// The ping's statement: one round trip for the round-trip time and the replication state.
inline constexpr const char* kReplicationPingSql =
    "SELECT pg_is_in_recovery() AS standby, "
    "coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8, -1) AS data_age_s";

/// The status bar's words for a connection opened on a standby ("data as of 2.3 s ago", or
/// that it was promoted); empty on a primary.
[[nodiscard]] QString replicationText(const ServerInfo& info, const ReplicationState& r);
/// What "data as of" measures, for the tooltip.
[[nodiscard]] QString replicationToolTip();

}  // namespace idem::ui
