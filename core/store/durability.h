#pragma once
// What the store promises about an acknowledged write: its replication setup read from
// PostgreSQL (read-only, one statement) and what it means for keys, in words an operator acts on.
// /healthz, /metrics, `idemctl status`, the per-tier `durability:` setting and the console read it.
#include <optional>
#include <string>
#include <vector>

#include "core/store/pg.h"

namespace idem::store {

/// One walsender of pg_stat_replication: a standby streaming from this server.
struct StandbyNode {
  std::string name;      // application_name: Patroni sets the member's name
  std::string address;   // client_addr, or "local" over a Unix socket
  std::string syncState; // sync, quorum, potential, async; empty when this role cannot see it
  std::optional<double> replayLagS;
};

struct Durability {
  enum class Level {
    Synchronous,   // a commit is acknowledged only once a synchronous standby has it
    Asynchronous,  // standbys stream, but a commit is acknowledged before they have it
    Local,         // no standby: a failover has nothing to promote
    NotFlushed,    // synchronous_commit = off: acknowledged before the primary's own disk has it
    Standby,       // this server is a standby (read-only)
  };
  Level level = Level::Local;
  std::string synchronousCommit;        // the session's setting
  std::string synchronousStandbyNames;  // the server's
  int standbys = -1;                    // walsenders in pg_stat_replication (-1: not read)
  int syncStandbys = -1;                // of them sync/quorum; -1 when this role cannot see sync_state
  std::optional<double> replayLagS;     // largest replay_lag of the standbys, when visible
  std::optional<double> dataAgeS;       // on a standby: now - the last replayed transaction's time
  std::string server;                   // the node this connection reached: "host:port" or "local socket"
  std::vector<StandbyNode> standbyList; // the standbys streaming from it, by name

  /// Whether the store gives what `durability: synchronous` asks for.
  [[nodiscard]] bool synchronous() const { return level == Level::Synchronous; }
  /// Synchronous by configuration, but no synchronous standby is connected: commits wait.
  [[nodiscard]] bool stalled() const { return level == Level::Synchronous && syncStandbys == 0; }
  /// One sentence: what an acknowledged key survives and what it does not.
  [[nodiscard]] std::string meaning() const;
};

[[nodiscard]] const char* levelName(Durability::Level level);

/// Reads the setup through `c` (any role; details of pg_stat_replication need pg_read_all_stats).
[[nodiscard]] Durability probeDurability(pg::Connection& c);

}  // namespace idem::store
