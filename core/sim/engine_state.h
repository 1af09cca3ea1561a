#pragma once
// The engine's bookkeeping (core/sim/engine.cpp): its events, and what it remembers of each
// operation and of each of the operation's keys. Private to the engine.
#include <cstdint>
#include <limits>
#include <vector>

#include "core/sim/backoff.h"
#include "core/sim/config.h"

namespace idem::sim::engine_detail {

constexpr Usec kNever = std::numeric_limits<Usec>::max();

// Send: a client attempt; Hedge: another copy of it; Retry: an intermediary's try of it.
enum class EvType : std::uint8_t { Arrival, Send, Hedge, Retry, Start, Done, Timeout };

/// What an answer is. Outage503 and ConnectionError never reached the server's queue;
/// ExecutedLost ran and was stored, but its answer never reached the client. Held and
/// Rejected: cross-key detection matched the request (409, or refused for good).
enum class Kind : std::uint8_t {
  Executed,
  ExecutedLost,
  Replay,
  Conflict,
  Held,
  Rejected,
  Fail500,
  Fail503,
  Outage503,
  ConnectionError
};

/// The outcome a client, intermediary or hedge sees in an answer (kind must be a failure).
inline unsigned outcomeOf(Kind kind) {
  switch (kind) {
    case Kind::Conflict:
    case Kind::Held:
      return kConflict409;
    case Kind::Fail500:
      return kStatus500;
    case Kind::Fail503:
    case Kind::Outage503:
      return kStatus503;
    case Kind::ExecutedLost:
    case Kind::ConnectionError:
      return kConnectionError;
    default:
      return 0;  // a success, or Rejected: nobody retries a refusal
  }
}

struct Event {
  Usec t;
  std::uint64_t seq;
  Usec retryAfter;   // Done: Retry-After carried by the answer, < 0 for none
  std::uint32_t id;  // operation index; Arrival: arrival stream index
  std::uint16_t attempt;
  std::uint16_t keyGen;  // which of the operation's keys the request carries
  EvType type;
  Kind kind;
};

struct Earlier {
  bool operator()(const Event& a, const Event& b) const { return a.t != b.t ? a.t < b.t : a.seq < b.seq; }
};

enum class KeyState : std::uint8_t { None, Processing, Done };
enum class ClientState : std::uint8_t { Waiting, Sleeping, Finished };

/// One idempotency key of an operation, as the store sees it.
struct KeyRecord {
  Usec storedAt = -1;  // stored (first receipt or completion); < 0: not stored
  Usec leaseUntil = 0;
  KeyState state = KeyState::None;
  bool executed = false;  // an execution ran under this key
  bool purged = false;    // purged at least once
};

struct Op {
  Usec t0 = 0;      // first attempt sent
  Usec sentAt = 0;  // latest attempt sent
  KeyRecord key;    // the key the client sends now
  std::vector<KeyRecord> retired;  // keys it sent before, by generation (new_key_on_retry)
  Usec lastExecAt = -1;            // latest execution under any key
  Usec twinExecAt = -1;            // same_body_share: when the request it repeats on purpose ran
  BackoffState backoff;
  BackoffState meshBackoff;        // the intermediary's sleeps
  float lastRetryCost = -1;        // AWS retry quota refund; < 0: no retry taken
  std::uint32_t clientObject = 0;  // clients.client_objects: whose retry budget it spends
  std::uint16_t pending = 0;       // events in the queue that name this operation
  std::uint16_t attempt = 0;
  std::uint16_t keyGen = 0;        // generation of `key`
  std::uint16_t lastExecGen = 0;
  std::uint8_t meshTries = 0;      // the intermediary's tries of this attempt after the first
  std::uint8_t copiesSent = 0;     // hedging: copies of this attempt sent
  std::uint8_t copiesOut = 0;      // hedging: copies not answered yet
  ClientState client = ClientState::Waiting;
  bool executed = false;  // under any key
  bool matched = false;   // cross-key detection matched one of its requests
};

/// One arrival process: Poisson at `rate` over [from, until), at most `limit` operations.
struct ArrivalStream {
  double meanGapUs = 0;
  Usec until = kNever;
  std::int64_t limit = std::numeric_limits<std::int64_t>::max();
  std::int64_t created = 0;
};

}  // namespace idem::sim::engine_detail
