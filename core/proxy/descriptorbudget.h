#pragma once
// The proxy's descriptors, counted against the process's limit (RLIMIT_NOFILE) at start: the
// store's pool, the upstream connections (late-answer waiters hold one of them each), a fixed
// reserve (listeners, trace writer, logs, the resolver) and the client connections. Running out
// at run time turns requests into failures whose meaning for a key is muddied, so a limit the
// settings cannot live within is refused before the first request, and the client connections
// get what is left.
#include <cstddef>
#include <optional>
#include <string>

namespace idem::proxy {

struct DescriptorNeeds {
  std::size_t storeConnections = 16;     // --pool
  std::size_t upstreamConnections = 256; // --upstream-connections
  std::size_t minClientConnections = 64; // fewer would not serve anyone usefully
  /// The store connections new keys' writes go on from the event loop (--store-writes loop):
  /// gate::Host::kStoreConnectionsWithoutWaiting at most; 0 with --store-writes threads.
  std::size_t loopStoreConnections = 0;
};

struct DescriptorBudget {
  std::size_t limit = 0;              // the soft RLIMIT_NOFILE; 0: unlimited
  std::size_t clientConnections = 0;  // what is left for clients (only meaningful with a limit)
  std::string refusal;                // non-empty: the settings cannot live within the limit
};

/// limit: the process's soft limit; nullopt reads it (getrlimit).
DescriptorBudget planDescriptors(const DescriptorNeeds& needs, std::optional<std::size_t> limit = std::nullopt);

}  // namespace idem::proxy
