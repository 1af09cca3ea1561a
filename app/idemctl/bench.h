#pragma once
// idemctl bench: the library's hot paths against pgbench running the minimal SQL and the
// seed's transactional design, on the same server, side by side in one run.
#include <string>

#include "core/store/keystore.h"

namespace idemctl::bench {

struct Settings {
  std::string conninfo;  // a database with Idem's schema and the bench tables
  int seconds = 5;       // per measurement
  int preloaded = 20000; // keys replayed by the replay measurements
};

/// What one measurement did: operations completed in how long.
struct Run {
  long long operations = 0;
  double seconds = 0;
  [[nodiscard]] double rate() const { return seconds > 0 ? static_cast<double>(operations) / seconds : 0; }
};

/// Requests per second through the library (Enforcer + KeyStore) with `clients` threads.
double libraryNewKeys(const Settings& s, int clients);
/// The same, as the count of new keys made and the time it took; `batching` as the store's
/// write path is told, and how it batched in `batched` (its lanes' limits at the end).
Run libraryNewKeysRun(const Settings& s, int clients, idem::store::WriteBatching batching = {},
                      idem::store::WriteBatchStats* batched = nullptr);
/// New keys through the library as a server on an event loop drives it (the proxy): every
/// request on one loop thread, begun and completed without waiting (Enforcer::beginWithoutWaiting,
/// completeWithoutWaiting), `clients` in flight.
Run libraryNewKeysEventLoopRun(const Settings& s, int clients);
/// New keys, each with its own body (a new payment per key), on a tier with cross_key off or
/// in `hold` (every claim also looks for the same request under another key): the cost of the look.
Run libraryDistinctNewKeysRun(const Settings& s, int clients, bool crossKey);
/// The same on one event loop (as the proxy writes new keys: Enforcer::beginWithoutWaiting).
Run libraryDistinctNewKeysEventLoopRun(const Settings& s, int clients, bool crossKey);
/// The store's write path alone (a fresh claim, then its completion, per key: no enforcer, no
/// trace) with `clients` requests in flight: a thread per request blocking on each statement
/// (KeyStore) …
Run storeWritesThreadsRun(const Settings& s, int clients);
/// … or every request on one event loop waiting on no statement (AsyncKeyBatches).
Run storeWritesEventLoopRun(const Settings& s, int clients, idem::store::WriteBatching batching = {});
/// traced=false discards the trace: a diagnostic showing what the trace costs, not the product.
double libraryReplays(const Settings& s, int clients, bool traced = true);
/// Replays of keys this process never decided (another instance did): the claim's order
/// guesses "new" and pays the fresh-claim INSERT before the read, every time.
double libraryReplaysUnseen(const Settings& s, int clients);
/// Every client replays the same key: a retry storm, where one key's trace grows fast.
double libraryReplaysOneKey(const Settings& s, int clients);

/// Replays answered from memory (the replay cache: no store round trip, the proxy's hottest
/// path) with `clients` threads, in `rounds` alternating runs of each way: begin() taking the
/// policy in force per request as serve and proxy do (a mutex and a reference count, so that
/// SIGHUP can swap it), and begin() under one snapshot held for the whole run (no lock). Their
/// ratio is what a reloadable policy costs a replay. Stores its own keys.
struct SnapshotCost {
  double perRequest = 0;  // replays per second, the policy taken per request
  double held = 0;        // replays per second, one snapshot held
};
SnapshotCost snapshotCost(const Settings& s, int clients, int rounds);

/// Hex of the fingerprint the library stores for the bench's request body.
std::string benchFingerprintHex();
/// The key the library's replay runs use for preloaded key i.
std::string replayKey(long long i);

/// Creates the seed's table (idem_bench.seed_keys) filled with the preloaded keys.
void prepareSeedTable(const Settings& s);
/// Stores the same number of keys through the library for its replay runs.
void prepareLibrary(const Settings& s);

/// Transactions per second reported by pgbench for one of the scripts below.
/// IdemNew/IdemReplay: the library's own statements (core/store/keysql.h) with its parameters
/// as literals — what Idem's SQL costs the server, without the library's client-side work.
enum class Script { MinimalNew, MinimalReplay, MinimalReplayOneKey, SeedReplay, SeedNew, IdemNew, IdemReplay };
/// Default: pgbench as it runs when not told otherwise (-M simple: every statement parsed and
/// planned as sent) — the baseline the targets name. Prepared: -M prepared, parsed once per
/// connection like the library's own statements — the strictest SQL baseline there is.
enum class Protocol { Default, Prepared };
double pgbench(const Settings& s, Script script, int clients, Protocol protocol);
/// The same, as the transactions pgbench processed and its run time.
Run pgbenchRun(const Settings& s, Script script, int clients, Protocol protocol);
/// pgbench running any script text.
Run pgbenchScriptRun(const Settings& s, const std::string& script, int clients, Protocol protocol);
/// New keys made by pgbench sending Idem's batch statements (-M prepared): `clients`
/// connections, each claiming `keysPerStatement` keys in one statement and then completing them
/// in another. No client-side work and perfect batches: the most any batching of Idem's writes
/// on this schema can make with clients × keysPerStatement requests in flight.
Run pgbenchIdemBatchRun(const Settings& s, int clients, int keysPerStatement);

}  // namespace idemctl::bench
