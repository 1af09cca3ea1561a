#pragma once
// What a simulation is told: the client population, its retry policy, the server and the
// key store. Parsed from JSON by config_parse.h; documented in core/sim/README.md.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sim/duration.h"

namespace idem::sim {

enum class Backoff { None, Constant, Linear, Exponential };
enum class Jitter { None, Full, Equal, Decorrelated };
/// How a Retry-After (or gRPC pushback) combines with the client's own backoff.
enum class RetryAfterMode {
  Ignore,   // the header is not read
  Max,      // sleep max(backoff, Retry-After): never earlier than asked (Stripe)
  Replace,  // sleep exactly Retry-After when present, else the backoff (urllib3, gRPC pushback)
};
/// What a Retry-After above retry_after_cap does: clamp it to the cap, ignore it (back off as
/// if absent), or give up the operation (got: a Retry-After beyond its request timeout ends it).
enum class OverCap { Clamp, Ignore, GiveUp };

/// Outcomes of one attempt that a policy may retry (bit set).
enum Outcome : unsigned {
  kTimeout = 1U << 0,          // no answer within the per-attempt timeout
  kConnectionError = 1U << 1,  // never reached the server
  kConflict409 = 1U << 2,      // original still processing (lease held)
  kStatus500 = 1U << 3,
  kStatus503 = 1U << 4,
};
inline constexpr unsigned kStatus5xx = kStatus500 | kStatus503;

struct Budget {
  enum class Type { None, TokenBucket, Ratio };
  /// Token bucket flavours: gRPC retry throttling (every qualified failure costs 1 token,
  /// every success earns `ratio`, retries only above half full) or AWS SDK retry quota
  /// (each retry costs retry_cost or timeout_cost, refunded when the operation succeeds).
  enum class Style { Grpc, Aws };
  Type type = Type::None;
  Style style = Style::Grpc;
  double maxTokens = 10;              // both styles: capacity, initially full
  double ratio = 0.1;                 // grpc: tokens earned per success; ratio budget: retries per first attempt
  double retryCost = 5;               // aws
  double timeoutCost = 10;            // aws: cost of a retry after a timeout
  double successCredit = 1;           // aws: earned by an operation that succeeded without retrying
  Usec window = 10 * kUsecPerSecond;  // ratio: sliding window
  double minRetriesPerSecond = 0;     // ratio: allowance on top of ratio (Finagle's floor)
};

struct Policy {
  std::string preset;  // name it started from, "" for none
  int maxAttempts = 4;
  std::optional<Usec> timeout = 3 * kUsecPerSecond;    // per attempt; nullopt = wait for ever
  std::optional<Usec> deadline = 60 * kUsecPerSecond;  // whole operation; nullopt = none
  Backoff backoff = Backoff::Exponential;
  Jitter jitter = Jitter::Full;
  Usec base = 500 * kUsecPerMs;
  double multiplier = 2;
  std::optional<Usec> cap = 5 * kUsecPerSecond;  // nullopt = uncapped
  Usec minDelay = 0;                             // floor on every sleep (Stripe: never below 0.5 s)
  bool firstRetryImmediate = false;              // urllib3: no sleep before the first retry
  unsigned retryOn = kTimeout | kConnectionError | kStatus5xx | kConflict409;
  RetryAfterMode retryAfter = RetryAfterMode::Max;
  std::optional<Usec> retryAfterCap = 60 * kUsecPerSecond;  // nullopt = any value honoured
  OverCap overCap = OverCap::Clamp;
  Budget budget;
};

struct ServerEvent {
  Usec at = 0;
  Usec duration = 0;
  double extraRatePerSecond = 0;       // spike: extra operations arriving during the window
  bool outage = false;                 // outage: every attempt fails fast during the window
  double outageFraction = 1;           // share of attempts the outage fails (1 = all; less = partial outage)
  bool outageConnectionError = false;  // outage answers: 503 (false) or connection errors
  std::optional<Usec> retryAfter;      // Retry-After on 503s during the window; default the server's
  std::optional<double> failureRate;   // failure rate during the window
};

struct Server {
  Usec latencyMedian = 100 * kUsecPerMs;  // log-normal fitted from median and p99
  Usec latencyP99 = 1 * kUsecPerSecond;
  Usec fastLatency = 2 * kUsecPerMs;     // replays, 409s, failures before execution, outage 503s
  double failureRate = 0;                // attempts failing before execution starts (not stored)
  int failureStatus = 500;               // 500 or 503
  double connectionErrorRate = 0;        // attempts that never reach the server
  double lostResponseRate = 0;           // executed and stored, but the answer is lost (client sees a connection error)
  double capacityRps = 0;                // requests handled per second; 0 = unlimited
  Usec retryAfter = 1 * kUsecPerSecond;  // Retry-After sent with 503
  Usec conflictRetryAfter = 1 * kUsecPerSecond;  // Retry-After sent with 409
  std::vector<ServerEvent> events;
};

/// Detection of the same request under another key (docs/simulator.md, "Causes"): a first
/// attempt of a key whose operation already executed under another key inside `window` is a
/// match. observe: executes and counts; hold: 409 (a client may retry it); reject: refused, the
/// operation ends.
struct CrossKey {
  enum class Mode { Off, Observe, Hold, Reject };
  Mode mode = Mode::Off;
  Usec window = 10 * 60 * kUsecPerSecond;
};

struct Store {
  enum class StoredAt { FirstReceipt, Completion };
  Usec ttl = 24LL * 3600 * kUsecPerSecond;
  std::optional<Usec> lease = 30 * kUsecPerSecond;  // nullopt: a processing key is never taken over
  Usec purgeLag = 0;                                // the key keeps protecting until stored + ttl + purge_lag
  StoredAt storedAt = StoredAt::FirstReceipt;
  CrossKey crossKey;
};

struct Clients {
  std::int64_t operations = 100000;
  double arrivalRatePerSecond = 200;
  /// SDK client objects the operations are spread over, in turn; each has its own retry budget
  /// (an AWS quota or gRPC bucket belongs to one client). 1: one client shared by every
  /// operation, what the presets assume.
  std::int64_t clientObjects = 1;
  /// Chance that a retry goes out under a key of its own (an agent told ids must be unique, a
  /// browser that keys every click): the store cannot know it is the same operation.
  double newKeyOnRetry = 0;
  /// Share of operations that are legitimately the same request as the operation before them
  /// (the same charge twice on purpose): what cross-key detection wrongly matches.
  double sameBodyShare = 0;
};

/// Something between the client and the server that retries on its own with the same request
/// (a service mesh, an API gateway), inside one client attempt: its tries are invisible to the
/// client, whose timeout keeps running. Its retry rules are a Policy's (max_attempts = 1 +
/// retries; timeout and deadline unused).
struct Intermediary {
  bool enabled = false;
  std::string preset;  // "" for none
  Policy retry;
};

/// Hedged requests (gRPC hedging, Polly): while no answer has come, another copy of the same
/// attempt (same key) goes out every `delay`, up to `maxCopies`. The first success wins; a
/// failure listed in nonFatal waits for the other copies, any other failure ends the attempt.
struct Hedging {
  bool enabled = false;
  Usec delay = 500 * kUsecPerMs;
  int maxCopies = 2;
  unsigned nonFatal = 0;  // Outcome bits
};

struct SimConfig {
  std::uint64_t seed = 1;
  Clients clients;
  Policy policy;
  Server server;
  Store store;
  Intermediary intermediary;
  Hedging hedging;
};

}  // namespace idem::sim
