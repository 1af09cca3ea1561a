#pragma once
// tests/gate: the pipeline's contract, tested once for both fronts. A real store (a fresh
// database on the CTest cluster), a real server over loopback, the real gate; only the
// execution is a stand-in for the demo API or the upstream. It counts its runs and answers
// what the request asks of it (headers below), on the event loop like the proxy's, or on a
// handler thread like the demo API's.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <QtTest>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/client/client.h"
#include "core/endpoint/server.h"
#include "core/server/problems.h"
#include "tests/support/testdb.h"

namespace idem::test {

inline const char* const kGatePolicy = R"json({
  "docs_url": "https://docs.test/idempotency",
  "tenant_header": "Account-Id",
  "tiers": [
    { "name": "charges", "routes": ["POST /v1/charges"], "ttl": "1h", "fingerprint": { "mode": "body" } },
    { "name": "notes", "routes": ["POST /v1/notes"], "key_required": false, "ttl": "1h" },
    { "name": "observed", "routes": ["POST /v1/observed"], "rollout": "observe", "ttl": "1h",
      "on_conflict": "wait:5s", "fingerprint": { "mode": "body" } },
    { "name": "dup-observe", "routes": ["POST /v1/dup-observe"], "ttl": "1h",
      "cross_key": { "mode": "observe", "window": "60s" } },
    { "name": "dup-hold", "routes": ["POST /v1/dup-hold"], "ttl": "1h", "cache": "2xx-only",
      "cross_key": { "mode": "hold", "window": "60s" } },
    { "name": "dup-reject", "routes": ["POST /v1/dup-reject"], "ttl": "1h",
      "cross_key": { "mode": "reject", "window": "2s" } },
    { "name": "waits", "routes": ["POST /v1/waits"], "ttl": "1h", "on_conflict": "wait:15s",
      "fingerprint": { "mode": "body" } }
  ]
})json";

/// What the fake was asked to run, as it saw it.
struct Ran {
  std::string path;    // the pipeline's path
  std::string target;  // as the client sent it
  std::string tenant;
  bool keyed = false;
};

class FakeExecution : public gate::Execution {
 public:
  explicit FakeExecution(Thread where) : m_thread(where) {}
  [[nodiscard]] Thread thread() const override { return m_thread; }
  /// Paths under /tenant-data read a tenant's data although no tier covers them.
  [[nodiscard]] bool needsTenant(const server::Request& r) const override { return r.path.starts_with("/tenant-data"); }
  /// X-Refuse: refused before anything is claimed (as the demo API refuses a wrong media type).
  [[nodiscard]] std::optional<gate::Refusal> vet(const server::Request& r) override {
    if (!http::findHeader(r.headers, "X-Refuse")) return std::nullopt;
    return gate::Refusal{server::problem(http::Problem::UnsupportedMediaType, "Send JSON.", "https://docs.test/idempotency"),
                         gate::Outcome::BadRequest};
  }
  /// X-Throw: throws. X-Hold: answers only when release() is called. X-Block: likewise, and keeps
  /// the thread it runs on until then (a demo API request stuck in the store). X-Then: release|unknown.
  /// X-Own-Request-Id: the answer names a request id of its own.
  void run(const gate::CallPtr& call) override {
    const server::Request& r = call->request();
    {
      const std::lock_guard lock(m_mutex);
      m_ran.push_back({r.path, r.target, call->tenant(), call->ticket() != nullptr});
    }
    ++m_calls;
    if (http::findHeader(r.headers, "X-Throw")) throw std::runtime_error("the fake execution failed");
    if (http::findHeader(r.headers, "X-Hold")) {
      const std::lock_guard lock(m_mutex);
      m_held.push_back(call);
      return;
    }
    if (http::findHeader(r.headers, "X-Block")) {
      std::unique_lock lock(m_mutex);
      ++m_blocked;
      m_unblock.wait(lock, [&] { return m_blocked == 0; });
    }
    answer(call);
  }

  /// Threads kept by X-Block requests now.
  [[nodiscard]] int blocked() const {
    const std::lock_guard lock(m_mutex);
    return m_blocked;
  }
  /// Lets every X-Block request answer.
  void unblock() {
    {
      const std::lock_guard lock(m_mutex);
      m_blocked = 0;
    }
    m_unblock.notify_all();
  }

  /// Answers every held call.
  void release() {
    std::vector<gate::CallPtr> held;
    {
      const std::lock_guard lock(m_mutex);
      held.swap(m_held);
    }
    for (const auto& call : held) answer(call);
  }
  [[nodiscard]] std::size_t held() const {
    const std::lock_guard lock(m_mutex);
    return m_held.size();
  }
  [[nodiscard]] int calls() const { return m_calls.load(); }
  [[nodiscard]] Ran last() const {
    const std::lock_guard lock(m_mutex);
    return m_ran.empty() ? Ran{} : m_ran.back();
  }

 private:
  void answer(const gate::CallPtr& call) {
    const server::Request& r = call->request();
    gate::Result result;
    result.response.status = 201;
    result.response.headers.emplace_back("Content-Type", "application/json");
    result.response.body = nlohmann::json{{"run", m_calls.load()}, {"path", r.path}, {"request", r.requestId}}.dump();
    if (http::findHeader(r.headers, "X-Own-Request-Id")) result.response.headers.emplace_back("Request-Id", "svc_1");
    const auto then = http::findHeader(r.headers, "X-Then");
    if (then == "release") {
      result.response.status = 503;
      result.then = gate::Result::Then::Release;
      result.reason = "the fake refused before any work";
    } else if (then == "unknown") {
      result.response.status = 502;
      result.then = gate::Result::Then::Unknown;
    }
    call->finish(std::move(result));
  }

  const Thread m_thread;
  std::atomic<int> m_calls{0};
  mutable std::mutex m_mutex;
  std::vector<Ran> m_ran;
  std::vector<gate::CallPtr> m_held;
  int m_blocked = 0;
  std::condition_variable m_unblock;
};

/// A server whose gate runs the fake: `serve`'s shape (handler threads) or the proxy's (loop).
struct GateServer {
  /// `setup` sees the host before the first request (e.g. the enforcer's bounds).
  GateServer(const TestDatabase& db, gate::Execution::Thread where, int threads = 8,
             const std::function<void(gate::Host&)>& setup = {})
      : GateServer(db.conninfo(), where, threads, setup) {}
  /// The same on any migrated store (a private cluster a test stops and starts).
  GateServer(const std::string& conninfo, gate::Execution::Thread where, int threads = 8,
             const std::function<void(gate::Host&)>& setup = {}) {
    endpoint::ServerOptions o;
    o.conninfo = conninfo;
    o.policy = policy::parsePolicy(kGatePolicy, "gate-test-policy.json");
    o.threads = threads;
    o.poolSize = 4;
    o.adminPort = 0;
    o.traceFlushInterval = std::chrono::milliseconds(20);
    o.accessLog = [this](const std::string& line) {
      const std::lock_guard lock(m_logMutex);
      m_log.push_back(line);
    };
    o.execution = [this, where, setup](gate::Host& host) {
      if (setup) setup(host);
      auto fake = std::make_unique<FakeExecution>(where);
      execution = fake.get();
      return fake;
    };
    server = std::make_unique<endpoint::Server>(std::move(o));
    server->start();
  }
  ~GateServer() { server.reset(); }

  [[nodiscard]] client::ClientResponse post(const std::string& path, const http::Headers& headers,
                                            const std::string& body = R"({"amount":1})") const {
    return client::Client("127.0.0.1", server->port()).post(path, headers, body);
  }
  [[nodiscard]] std::string metrics() const {
    return client::Client("127.0.0.1", server->adminPort()).get("/metrics").body;
  }
  /// idem_observed_total for one route and decision; 0 when the series is absent.
  [[nodiscard]] long long observed(const std::string& route, const std::string& would) const {
    return sample("idem_observed_total{route=\"" + route + "\",would=\"" + would + "\"} ");
  }
  /// idem_requests_total for one label set; 0 when the series is absent.
  [[nodiscard]] long long requests(const std::string& tier, const std::string& outcome, int status) const {
    return sample("idem_requests_total{tier=\"" + tier + "\",outcome=\"" + outcome + "\",status=\"" +
                  std::to_string(status) + "\"} ");
  }
  /// The value of one series ("name{labels} "); 0 when absent.
  [[nodiscard]] long long sample(const std::string& series) const {
    const std::string body = metrics();
    const auto at = body.find(series);
    return at == std::string::npos ? 0 : std::stoll(body.substr(at + series.size()));
  }

  /// The access log line of the answer that carried this Request-Id; null when none (yet).
  [[nodiscard]] nlohmann::json logLine(const std::string& requestId) const {
    const std::lock_guard lock(m_logMutex);
    for (const auto& line : m_log) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.value("request_id", "") == requestId) return j;
    }
    return nullptr;
  }

  FakeExecution* execution = nullptr;
  std::unique_ptr<endpoint::Server> server;

 private:
  mutable std::mutex m_logMutex;
  std::vector<std::string> m_log;
};

/// One store, and the gate over both shapes of an execution: a suite's tests run against each
/// (a global data column `onLoop`); keys carry the shape's name, so the two never share one.
struct GatePair {
  explicit GatePair(const std::string& prefix)
      : db(prefix),
        loop(std::make_unique<GateServer>(db, gate::Execution::Thread::Loop)),
        handlers(std::make_unique<GateServer>(db, gate::Execution::Thread::Handlers)) {}
  ~GatePair() {
    loop.reset();  // stop both before the database goes
    handlers.reset();
  }
  static void addShapes() {
    QTest::addColumn<bool>("onLoop");
    QTest::newRow("loop") << true;
    QTest::newRow("handlers") << false;
  }
  GateServer& server(bool onLoop) { return onLoop ? *loop : *handlers; }
  static std::string key(const std::string& name, bool onLoop) { return name + (onLoop ? "-loop" : "-handlers"); }
  /// The running test row's shape (its global data, addShapes), and its server and keys.
  static bool rowOnLoop() {
    QFETCH_GLOBAL(bool, onLoop);
    return onLoop;
  }
  GateServer& server() { return server(rowOnLoop()); }
  static std::string key(const std::string& name) { return key(name, rowOnLoop()); }

  TestDatabase db;
  std::unique_ptr<GateServer> loop;
  std::unique_ptr<GateServer> handlers;
};

/// Statements of this database waiting on a lock (a test's lock held over the store).
inline long long waitingOnLocks(pg::Connection& c) {
  return c.exec("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'")
      .integer(0, "n");
}

inline http::Headers keyed(const std::string& key, const std::string& tenant = "acct_1") {
  http::Headers h{{"Content-Type", "application/json"}};
  if (!key.empty()) h.emplace_back("Idempotency-Key", key);
  if (!tenant.empty()) h.emplace_back("Account-Id", tenant);
  return h;
}

inline nlohmann::json problemOf(const client::ClientResponse& r) { return nlohmann::json::parse(r.body, nullptr, false); }

}  // namespace idem::test
