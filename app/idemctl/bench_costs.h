#pragma once
// idemctl bench --new-key-costs: what one new key costs, beside what pgbench's minimal INSERT +
// UPDATE (-M prepared) costs on the same server — commits, WAL bytes and records, the server's
// CPU and the client's — measured in alternating rounds so the host's drift falls on both.
#include <string>
#include <vector>

#include "app/idemctl/bench.h"

namespace idemctl::bench {

/// Totals of one contender over its rounds at one client count.
struct Costs {
  Run run;                 // new keys made, and the time they took
  double commits = 0;      // pg_stat_database.xact_commit
  double walBytes = 0;     // pg_stat_wal.wal_bytes
  double walRecords = 0;   // pg_stat_wal.wal_records
  double walFpi = 0;       // pg_stat_wal.wal_fpi: full-page images (a page's first change after a checkpoint)
  double serverCpuS = -1;  // every PostgreSQL process; -1 when the server is not on this host
  double clientCpuS = 0;   // this process (the library) or its pgbench child

  [[nodiscard]] double perKey(double total) const {
    return run.operations > 0 ? total / static_cast<double>(run.operations) : 0;
  }
};

/// The two things a cost table compares, as its lines and its JSON name them.
struct Contenders {
  const char* first;
  const char* second;
  const char* firstJson;
  const char* secondJson;
};
inline constexpr Contenders kLibraryVsPgbench{"library (Idem)", "pgbench minimal, -M prepared", "library",
                                              "pgbench_minimal_prepared"};
inline constexpr Contenders kAdaptingVsFixed{"in flight adapting", "in flight fixed", "in_flight_adapting",
                                             "in_flight_fixed"};
inline constexpr Contenders kCrossKeyHoldVsOff{"cross_key hold", "cross_key off", "cross_key_hold",
                                               "cross_key_off"};

inline constexpr Contenders kWritePathVsPgbench{"new keys", "pgbench minimal, -M prepared", "idem",
                                                "pgbench_minimal_prepared"};
inline constexpr Contenders kBatchBoundVsPgbench{"Idem's batch SQL", "pgbench minimal, -M prepared",
                                                 "idem_batch_sql", "pgbench_minimal_prepared"};

struct CostRow {
  int clients = 0;
  Costs first, second;  // the ratio line is first / second
  std::string shape;    // what the first ran as, when the row says more than its client count
};

/// Measures each client count `rounds` times, the library and pgbench alternating (which goes
/// first alternates too).
[[nodiscard]] std::vector<CostRow> measureNewKeyCosts(const Settings& s, const std::vector<int>& clients, int rounds);

/// New keys through the library with its write lanes finding their own count of batches in
/// flight beside the same with `fixed` in flight, alternating the same way. `settled` gets, per
/// client count, the limits the adapting lanes ended each run at ("claims/completions"), in order.
[[nodiscard]] std::vector<CostRow> measureInFlightCosts(const Settings& s, const std::vector<int>& clients, int rounds,
                                                        int fixed, std::vector<std::string>* settled = nullptr);

/// What a tier's cross_key costs a new key (each key with its own body, so none matches): the
/// library with cross_key hold beside the library with it off, alternating the same way.
/// The ceiling batching puts on new keys with `clients` requests in flight (each waits for its
/// claim, then for its completion): pgbench sending Idem's batch statements in every shape
/// c connections × b keys a statement with c × b = clients (pgbenchIdemBatchRun), beside
/// pgbench's minimal INSERT + UPDATE at `clients` connections, every shape and the minimal in
/// each round, the order turning. One row per shape.
[[nodiscard]] std::vector<CostRow> measureBatchBound(const Settings& s, const std::vector<int>& clients, int rounds);

/// New keys two ways deep — the store's write path alone (storeWritesThreadsRun,
/// storeWritesEventLoopRun) and the whole library (libraryNewKeysRun, libraryNewKeysEventLoopRun)
/// — each driven by a thread per request and by one event loop, beside pgbench's minimal INSERT +
/// UPDATE at `clients` connections, all in each round, the order turning. Four rows per count.
[[nodiscard]] std::vector<CostRow> measureWritePaths(const Settings& s, const std::vector<int>& clients, int rounds);

/// New keys with cross_key hold beside off, alternating; `onEventLoop`: driven as the proxy drives
/// them (one event loop, no thread waiting on the store), else a thread per request (serve).
[[nodiscard]] std::vector<CostRow> measureCrossKeyCosts(const Settings& s, const std::vector<int>& clients,
                                                        int rounds, bool onEventLoop);

[[nodiscard]] std::string costsText(const std::vector<CostRow>& rows, const Contenders& names);
[[nodiscard]] std::string costsMarkdown(const std::vector<CostRow>& rows, const Contenders& names);
/// Per row: both contenders' totals and per-key figures, and `ratios` (first / second).
[[nodiscard]] std::string costsJson(const std::vector<CostRow>& rows, const Contenders& names, int secondsPerFigure,
                                    int rounds);

}  // namespace idemctl::bench
