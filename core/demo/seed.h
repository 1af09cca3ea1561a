#pragma once
// Seeds a demo store with realistic history through real HTTP to the running endpoint, then
// moves some of it back in time with SQL so a few seconds of seeding look like two days of
// traffic. Backdating (rather than short-TTL tiers) keeps the demo policy the one a real
// payments API would publish: 24h for payments, 30m for orders.
#include <string>
#include <vector>

#include "core/endpoint/server.h"

namespace idem::demo {

struct SeedReport {
  int requests = 0;
  std::string incidentTenant;  // the seed's incident: charged twice after the key expired
  std::string incidentKey;
  std::string stuckKey;            // a payment left processing by a "crashed" worker
  std::vector<std::string> lines;  // what was seeded, in words, for the terminal
};

/// Runs the seed against `server` (fault injection must be allowed) and its database.
/// Throws std::runtime_error when a request does not get the answer the story needs.
SeedReport seedHistory(endpoint::Server& server, const std::string& conninfo);

/// Moves every record of one key (live row, archive, events, ledger) `seconds` into the past.
void backdateKey(pg::Connection& conn, const std::string& tenant, const std::string& endpoint, const std::string& key,
                 long long seconds);

}  // namespace idem::demo
