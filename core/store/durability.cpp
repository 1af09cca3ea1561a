#include "core/store/durability.h"

#include <cstdio>

namespace idem::store {
namespace {

// pg_stat_replication lists walsenders to every role, but sync_state and the lags only to
// roles with pg_read_all_stats: NULL otherwise, hence hidden_standbys.
constexpr const char* kProbeSql =
    "SELECT pg_is_in_recovery() AS standby, current_setting('synchronous_commit') AS synchronous_commit, "
    "current_setting('synchronous_standby_names') AS synchronous_standby_names, "
    "(SELECT count(*) FROM pg_stat_replication) AS standbys, "
    "(SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')) AS sync_standbys, "
    "(SELECT count(*) FROM pg_stat_replication WHERE sync_state IS NULL) AS hidden_standbys, "
    "(SELECT extract(epoch FROM max(replay_lag))::float8 FROM pg_stat_replication) AS replay_lag_s, "
    "CASE WHEN pg_is_in_recovery() THEN extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 "
    "END AS data_age_s, "
    "coalesce(host(inet_server_addr()) || ':' || inet_server_port(), 'local socket') AS server";

constexpr const char* kStandbysSql =
    "SELECT application_name AS name, coalesce(host(client_addr), 'local') AS address, "
    "coalesce(sync_state, '') AS sync_state, extract(epoch FROM replay_lag)::float8 AS replay_lag_s "
    "FROM pg_stat_replication ORDER BY application_name";

std::string seconds(double s) {
  char buf[32];
  if (s < 1)
    std::snprintf(buf, sizeof buf, "%.0f ms", s * 1000);
  else
    std::snprintf(buf, sizeof buf, s < 10 ? "%.1f s" : "%.0f s", s);
  return buf;
}

}  // namespace

const char* levelName(Durability::Level level) {
  switch (level) {
    case Durability::Level::Synchronous: return "synchronous";
    case Durability::Level::Asynchronous: return "asynchronous";
    case Durability::Level::Local: return "local";
    case Durability::Level::NotFlushed: return "not_flushed";
    case Durability::Level::Standby: return "standby";
  }
  return "unknown";
}

Durability probeDurability(pg::Connection& c) {
  auto r = c.exec(kProbeSql);
  Durability d;
  d.synchronousCommit = r.str(0, "synchronous_commit");
  d.synchronousStandbyNames = r.str(0, "synchronous_standby_names");
  d.standbys = static_cast<int>(r.integer(0, "standbys"));
  d.syncStandbys = r.integer(0, "hidden_standbys") > 0 ? -1 : static_cast<int>(r.integer(0, "sync_standbys"));
  const int lagCol = r.column("replay_lag_s");
  if (!r.isNull(0, lagCol)) d.replayLagS = r.real(0, "replay_lag_s");
  const int ageCol = r.column("data_age_s");
  if (!r.isNull(0, ageCol)) d.dataAgeS = r.real(0, "data_age_s");
  d.server = r.str(0, "server");
  if (d.standbys > 0) {
    auto s = c.exec(kStandbysSql);
    const int lag = s.column("replay_lag_s");
    for (int i = 0; i < s.rows(); ++i) {
      StandbyNode n{s.str(i, "name"), s.str(i, "address"), s.str(i, "sync_state"), std::nullopt};
      if (!s.isNull(i, lag)) n.replayLagS = s.real(i, "replay_lag_s");
      d.standbyList.push_back(std::move(n));
    }
  }
  const bool waitsForStandby = !d.synchronousStandbyNames.empty() &&
                               (d.synchronousCommit == "on" || d.synchronousCommit == "remote_write" ||
                                d.synchronousCommit == "remote_apply");
  if (r.boolean(0, "standby"))
    d.level = Durability::Level::Standby;
  else if (d.synchronousCommit == "off")
    d.level = Durability::Level::NotFlushed;
  else if (waitsForStandby)
    d.level = Durability::Level::Synchronous;
  else if (d.standbys > 0)
    d.level = Durability::Level::Asynchronous;
  else
    d.level = Durability::Level::Local;
  return d;
}

std::string Durability::meaning() const {
  switch (level) {
    case Level::Synchronous:
      if (stalled())
        return "writes wait for a synchronous standby and none is connected: claims and completions stall "
               "until one connects (synchronous_standby_names = '" + synchronousStandbyNames + "')";
      return std::string("writes are acknowledged only once a synchronous standby has them") +
             (synchronousCommit == "remote_write" ? " in memory (remote_write: not yet on its disk)" : "") +
             ": a failover to it keeps every acknowledged key";
    case Level::Asynchronous:
      return "writes are acknowledged before the standby has them: a failover can forget keys acknowledged in the "
             "last " + (replayLagS ? seconds(*replayLagS) : std::string("moments")) +
             " (replay lag), and their retries run again";
    case Level::Local:
      return "no standby: an acknowledged key is on this server only; a failover has nothing to promote and a "
             "lost disk loses every key";
    case Level::NotFlushed:
      return "synchronous_commit is off: writes are acknowledged before even this server's disk has them; a crash "
             "can forget keys acknowledged in the last moments, and their retries run again";
    case Level::Standby:
      return "this server is a standby: read-only" +
             (dataAgeS ? ", data as of " + seconds(*dataAgeS) + " ago"
                       : std::string(", no transaction replayed since it started (its data's age is unknown)"));
  }
  return {};
}

}  // namespace idem::store
