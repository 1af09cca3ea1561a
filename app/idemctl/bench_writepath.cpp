// The store's write path alone (a fresh claim, then its completion, per key; no enforcer, no
// trace), driven the two ways a server can drive it: a thread per request blocking on each
// statement (KeyStore), or every request on one event loop that waits on no statement
// (AsyncKeyBatches). Side by side they show what parking a thread per request costs the batches.
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <functional>
#include <random>
#include <thread>

#include "app/idemctl/bench.h"
#include "app/idemctl/bench_loop.h"
#include "core/store/asynckeybatches.h"

namespace idemctl::bench {
namespace {

using namespace std::chrono_literals;

idem::store::ClaimRequest claimOf(const std::string& key) {
  idem::store::ClaimRequest q;
  q.scope = {"bench", "POST /v1/payments", key};
  q.fingerprint = std::string(32, '\x5a');
  q.tier = "payments";
  q.ttl = 24h;
  q.lease = 30s;
  q.requestId = "req_" + key;
  return q;
}

idem::store::CompleteRequest completionOf(const std::string& key, const std::string& token) {
  idem::store::CompleteRequest c;
  c.scope = {"bench", "POST /v1/payments", key};
  c.leaseToken = token;
  c.response.status = 201;
  c.response.headers = {{"Content-Type", "application/json"}};
  c.response.body = R"({"id":"pay_1","amount":1000,"currency":"usd","status":"succeeded"})";
  c.requestId = "req_" + key;
  return c;
}

std::string runTag() { return std::to_string(std::random_device{}()); }

}  // namespace

Run storeWritesThreadsRun(const Settings& s, int clients) {
  idem::store::Pool pool(s.conninfo, clients + 1);
  idem::store::KeyStore store(pool);
  const std::string tag = runTag();
  return measure(clients, s.seconds, [&](int t, std::mt19937_64&, long long n) {
    const std::string key = "bench-wt-" + tag + "-" + std::to_string(t) + "-" + std::to_string(n);
    const auto claimed = store.claim(claimOf(key));
    return claimed.decision == idem::store::Decision::Execute &&
           store.complete(completionOf(key, claimed.leaseToken)).stored;
  });
}

Run storeWritesEventLoopRun(const Settings& s, int clients, idem::store::WriteBatching batching) {
  boost::asio::io_context loop;
  idem::store::AsyncKeyBatches batches(loop.get_executor(), s.conninfo, batching);
  const std::string tag = runTag();
  bool stop = false;
  long long done = 0;
  std::string failure;
  // Each client: claim, then complete, then the next key — from its callbacks, on the loop.
  std::function<void(int, long long)> next = [&](int client, long long n) {
    if (stop) return;
    const std::string key = "bench-wl-" + tag + "-" + std::to_string(client) + "-" + std::to_string(n);
    batches.claimFresh(claimOf(key), [&, key, client, n](auto claimed, auto error) {
      if (error || !claimed) {
        if (failure.empty()) failure = "a claim of the bench's own new key was not made";
        return;
      }
      batches.complete(completionOf(key, claimed->leaseToken), [&, client, n](auto stored, auto error2) {
        if (error2 || !stored || !stored->stored) {
          if (failure.empty()) failure = "a completion of the bench's own key was not stored";
          return;
        }
        if (stop) return;
        ++done;
        next(client, n + 1);
      });
    });
  };
  for (int c = 0; c < clients; ++c) boost::asio::post(loop, [&, c] { next(c, 0); });
  const Run made = runLoopFor(loop, s.seconds, stop, done);
  if (!failure.empty()) throw std::runtime_error(failure);
  return made;
}

}  // namespace idemctl::bench
