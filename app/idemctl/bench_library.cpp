// The library's hot paths, driven the way an HTTP server would drive them: one Enforcer
// shared by `clients` threads over one pool, or (new keys) by one event loop.
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <functional>
#include <random>
#include <thread>

#include "app/idemctl/bench.h"
#include "app/idemctl/bench_loop.h"
#include "core/enforce/enforcer.h"
#include "core/fingerprint/fingerprint.h"
#include "core/store/asynckeybatches.h"
#include "core/store/policystore.h"

namespace idemctl::bench {
namespace {

constexpr const char* kPolicy = R"json({
  "docs_url": "https://bench.invalid/idempotency",
  "tenant_header": "Account-Id",
  "tiers": [ { "name": "payments", "routes": ["POST /v1/payments"], "ttl": "24h", "lease": "30s",
               "fingerprint": { "mode": "json" } } ]
})json";

// The same tier looking for duplicates across keys (docs/policy.md, "Duplicates across keys").
constexpr const char* kCrossKeyPolicy = R"json({
  "docs_url": "https://bench.invalid/idempotency",
  "tenant_header": "Account-Id",
  "tiers": [ { "name": "payments", "routes": ["POST /v1/payments"], "ttl": "24h", "lease": "30s",
               "fingerprint": { "mode": "json" }, "cross_key": { "mode": "hold", "window": "60s" } } ]
})json";

constexpr const char* kBody = R"({"amount":1000,"currency":"usd","customer":"cus_1"})";
constexpr const char* kResponse = R"({"id":"pay_1","amount":1000,"currency":"usd","status":"succeeded"})";

/// Records the bench's policy as `idemctl serve` does, so keys carry a policy version as in
/// production.
int recordedVersion(const std::string& conninfo, const idem::policy::Policy& policy) {
  idem::pg::Connection conn(conninfo);
  return idem::store::recordPolicy(conn, policy);
}

struct Stack {
  idem::policy::Policy policy;
  idem::store::Pool pool;
  idem::store::KeyStore store;
  idem::trace::TraceWriter trace;
  idem::enforce::Enforcer enforcer;
  /// recent: the process's table of keys it decided (as in production) unless told otherwise.
  Stack(const std::string& conninfo, int clients, bool traced = true,
        idem::store::RecentKeys& recent = idem::store::RecentKeys::shared(), const char* policyText = kPolicy,
        idem::store::WriteBatching batching = {})
      : policy(idem::policy::parsePolicy(policyText, "bench")),
        pool(conninfo, clients + 1),
        store(pool, recent, batching),
        trace(pool, idem::trace::TraceWriter::Options{std::chrono::milliseconds(100), 1000, 100000, traced}),
        enforcer(policy, recordedVersion(conninfo, policy), store, trace) {}
};

idem::enforce::Request request(const std::string& key, const std::string& body = kBody) {
  idem::enforce::Request r;
  r.method = "POST";
  r.path = "/v1/payments";
  r.headers = {{"Content-Type", "application/json"}, {"Idempotency-Key", key}};
  r.tenant = "bench";
  r.body = body;
  return r;
}

/// A payment of its own for each key: no two keys make the same request.
std::string distinctBody(const std::string& key) {
  return R"({"amount":1000,"currency":"usd","customer":"cus_1","order":")" + key + "\"}";
}

bool executeOnce(idem::enforce::Enforcer& e, const std::string& key, const std::string& body = kBody) {
  auto d = e.begin(request(key, body));
  if (d.kind != idem::enforce::Decision::Kind::Execute) return d.response.status == 201;
  auto r = e.complete(*d.ticket, {201, {{"Content-Type", "application/json"}}, kResponse});
  return r.status == 201;
}


}  // namespace

std::string replayKey(long long i) { return "bench-replay-" + std::to_string(i); }

std::string benchFingerprintHex() {
  const idem::policy::Policy policy = idem::policy::parsePolicy(kPolicy, "bench");
  return idem::fp::toHex(idem::fp::compute(policy.tiers.front().fingerprint, kBody, request("x").headers));
}

void prepareLibrary(const Settings& s) {
  Stack stack(s.conninfo, 8);
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (long long i = t; i < s.preloaded; i += 8) executeOnce(stack.enforcer, replayKey(i));
    });
  for (auto& th : threads) th.join();
}

double libraryNewKeys(const Settings& s, int clients) { return libraryNewKeysRun(s, clients).rate(); }

Run libraryNewKeysRun(const Settings& s, int clients, idem::store::WriteBatching batching,
                      idem::store::WriteBatchStats* batched) {
  Stack stack(s.conninfo, clients, true, idem::store::RecentKeys::shared(), kPolicy, batching);
  const std::string run = std::to_string(std::random_device{}());
  const Run made = measure(clients, s.seconds, [&](int t, std::mt19937_64&, long long n) {
    return executeOnce(stack.enforcer, "bench-new-" + run + "-" + std::to_string(t) + "-" + std::to_string(n));
  });
  if (batched != nullptr) *batched = stack.store.writeBatches();
  return made;
}

namespace {
// New keys on one event loop; `distinctBodies`: each key its own payment (the body names its
// key), as the cross-key comparison needs.
Run newKeysOnEventLoop(const Settings& s, int clients, const char* policyText, bool distinctBodies) {
  Stack stack(s.conninfo, clients, true, idem::store::RecentKeys::shared(), policyText);
  boost::asio::io_context loop;
  idem::store::AsyncKeyBatches writes(loop.get_executor(), s.conninfo);
  stack.store.setWritesWithoutWaiting(&writes);
  const std::string run = std::to_string(std::random_device{}());
  bool stop = false;
  long long done = 0;
  std::string failure;
  // Each client as a server on an event loop drives one request: begin, run (nothing here),
  // complete — from the callbacks, on the loop; the blocking calls only where those decline.
  struct Client {
    idem::enforce::ConflictWait wait;
    std::optional<idem::enforce::Ticket> ticket;
  };
  std::vector<Client> state(static_cast<std::size_t>(clients));
  std::function<void(int, long long)> next;
  auto fail = [&](const std::string& why) {
    if (failure.empty()) failure = why;
  };
  auto completed = [&](int c, long long n, const idem::enforce::Response& r) {
    if (r.status != 201) return fail("a new key's completion answered " + std::to_string(r.status));
    if (stop) return;
    ++done;
    next(c, n + 1);
  };
  auto decided = [&](int c, long long n, idem::enforce::Decision d) {
    if (d.kind != idem::enforce::Decision::Kind::Execute) return fail("a new key was not executed: " + d.outcome);
    Client& me = state[static_cast<std::size_t>(c)];
    me.ticket.emplace(std::move(*d.ticket));
    auto answer = [] { return idem::enforce::Response{201, {{"Content-Type", "application/json"}}, kResponse}; };
    const bool sent = stack.enforcer.completeWithoutWaiting(
        *me.ticket, answer(), {}, [&, c, n](bool stored, idem::enforce::Response r) {
          Client& self = state[static_cast<std::size_t>(c)];
          if (!stored) r = stack.enforcer.complete(*self.ticket, std::move(r));
          completed(c, n, r);
        });
    if (!sent) completed(c, n, stack.enforcer.complete(*me.ticket, answer()));
  };
  next = [&](int c, long long n) {
    Client& me = state[static_cast<std::size_t>(c)];
    me = Client{};
    const std::string key =
        (distinctBodies ? "bench-distinct-loop-" : "bench-loop-") + run + "-" + std::to_string(c) + "-" + std::to_string(n);
    const auto req = std::make_shared<idem::enforce::Request>(request(key, distinctBodies ? distinctBody(key) : kBody));
    const auto policy = stack.enforcer.policy();
    const bool sent = stack.enforcer.beginWithoutWaiting(*req, policy, me.wait, [&, c, n, req, policy](auto d) {
      if (!d) d = stack.enforcer.begin(*req, policy, state[static_cast<std::size_t>(c)].wait);
      decided(c, n, std::move(*d));
    });
    if (!sent) decided(c, n, stack.enforcer.begin(*req, policy, me.wait));
  };
  for (int c = 0; c < clients; ++c) boost::asio::post(loop, [&, c] { next(c, 0); });
  const Run made = runLoopFor(loop, s.seconds, stop, done);
  stack.store.setWritesWithoutWaiting(nullptr);
  if (!failure.empty()) throw std::runtime_error(failure);
  return made;
}
}  // namespace

Run libraryNewKeysEventLoopRun(const Settings& s, int clients) { return newKeysOnEventLoop(s, clients, kPolicy, false); }

Run libraryDistinctNewKeysEventLoopRun(const Settings& s, int clients, bool crossKey) {
  return newKeysOnEventLoop(s, clients, crossKey ? kCrossKeyPolicy : kPolicy, true);
}

Run libraryDistinctNewKeysRun(const Settings& s, int clients, bool crossKey) {
  Stack stack(s.conninfo, clients, true, idem::store::RecentKeys::shared(), crossKey ? kCrossKeyPolicy : kPolicy);
  const std::string run = std::to_string(std::random_device{}());
  return measure(clients, s.seconds, [&](int t, std::mt19937_64&, long long n) {
    const std::string key = "bench-distinct-" + run + "-" + std::to_string(t) + "-" + std::to_string(n);
    return executeOnce(stack.enforcer, key, distinctBody(key));
  });
}

namespace {
template <typename PickKey>
double replays(const Settings& s, int clients, bool traced, PickKey pickKey,
               idem::store::RecentKeys& recent = idem::store::RecentKeys::shared()) {
  Stack stack(s.conninfo, clients, traced, recent);
  const double rate = measure(clients, s.seconds, [&](int, std::mt19937_64& rng, long long) {
    auto d = stack.enforcer.begin(request(pickKey(rng)));
    return d.kind == idem::enforce::Decision::Kind::Respond && d.response.status == 201;
  }).rate();
  stack.trace.flush();  // so the next measurement does not pay for this one's trace
  return rate;
}
}  // namespace

double libraryReplays(const Settings& s, int clients, bool traced) {
  std::uniform_int_distribution<long long> pick(0, s.preloaded - 1);
  return replays(s, clients, traced, [&](std::mt19937_64& rng) { return replayKey(pick(rng)); });
}

double libraryReplaysUnseen(const Settings& s, int clients) {
  std::uniform_int_distribution<long long> pick(0, s.preloaded - 1);
  // Every key looks new to this process (a restarted one, another instance): the claim is tried
  // before the read until the process learns that such keys are mostly retries.
  idem::store::RecentKeys none(0);
  return replays(
      s, clients, true, [&](std::mt19937_64& rng) { return replayKey(pick(rng)); }, none);
}

SnapshotCost snapshotCost(const Settings& s, int clients, int rounds) {
  constexpr long long kKeys = 1000;  // well inside the cache's bounds: every replay is a hit
  Stack stack(s.conninfo, clients);
  stack.enforcer.setReplayCache({std::chrono::minutes(10)});
  const std::string run = std::to_string(std::random_device{}());
  auto key = [&](long long i) { return "bench-snapshot-" + run + "-" + std::to_string(i); };
  for (long long i = 0; i < kKeys; ++i) {
    executeOnce(stack.enforcer, key(i));
    (void)stack.enforcer.begin(request(key(i)));  // the store's replay puts it in the cache
  }
  std::uniform_int_distribution<long long> pick(0, kKeys - 1);
  const idem::enforce::PolicyPtr held = stack.enforcer.policy();
  auto replayed = [](const idem::enforce::Decision& d) {
    return d.kind == idem::enforce::Decision::Kind::Respond && d.response.status == 201;
  };
  Run perRequest, once;
  for (int r = 0; r < rounds; ++r) {
    const Run a = measure(clients, s.seconds, [&](int, std::mt19937_64& rng, long long) {
      return replayed(stack.enforcer.begin(request(key(pick(rng)))));
    });
    stack.trace.flush();
    const Run b = measure(clients, s.seconds, [&](int, std::mt19937_64& rng, long long) {
      return replayed(stack.enforcer.begin(request(key(pick(rng))), held));
    });
    stack.trace.flush();
    perRequest.operations += a.operations, perRequest.seconds += a.seconds;
    once.operations += b.operations, once.seconds += b.seconds;
  }
  return {perRequest.rate(), once.rate()};
}

double libraryReplaysOneKey(const Settings& s, int clients) {
  const std::string hot = replayKey(0);
  return replays(s, clients, true, [&](std::mt19937_64&) -> const std::string& { return hot; });
}

}  // namespace idemctl::bench
