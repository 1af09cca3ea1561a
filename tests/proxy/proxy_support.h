#pragma once
// Shared by the proxy suites: the sample Flask service (resources/sample/charge_app.py) as a
// real process that counts its own executions, and a real `idemctl proxy` in front of it over a
// fresh database with the store's schema only (`idemctl migrate`, no demo tables).
#include <algorithm>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/client/client.h"
#include "tests/endpoint/serve_process.h"
#include "tests/proxy/raw_upstream.h"
#include "tests/support/testdb.h"

namespace idem::test {

/// The policy the proxy suites enforce on the sample service's routes.
inline const char* const kProxyPolicy = R"json({
  "docs_url": "https://docs.test/idempotency",
  "tiers": [
    { "name": "charges", "routes": ["POST /v1/charges"], "ttl": "1h", "lease": "5s",
      "fingerprint": { "mode": "json" } },
    { "name": "short", "routes": ["POST /v1/short"], "ttl": "2s", "lease": "1s", "on_expired": "reject" },
    { "name": "renewals", "routes": ["POST /v1/renewals"], "ttl": "2s", "lease": "1s", "on_expired": "execute" },
    { "name": "flaky", "routes": ["POST /v1/flaky"], "ttl": "1h", "cache": "2xx-only" },
    { "name": "inspect", "routes": ["POST /v1/headers"], "ttl": "1h" },
    { "name": "dup-observe", "routes": ["POST /v1/transfers"], "ttl": "1h",
      "cross_key": { "mode": "observe", "window": "60s" } },
    { "name": "dup-hold", "routes": ["POST /v1/payouts"], "ttl": "1h",
      "cross_key": { "mode": "hold", "window": "60s" } },
    { "name": "dup-reject", "routes": ["POST /v1/refunds"], "ttl": "1h",
      "cross_key": { "mode": "reject", "window": "60s" } }
  ]
})json";

/// `python3 charge_app.py` on a loopback port; its ledger file counts executions even across a kill.
class UpstreamApp {
 public:
  /// port 0: any free port (then restart() reuses the one it got).
  explicit UpstreamApp(const std::string& ledger, int port = 0) : m_ledger(ledger) { start(port); }

  [[nodiscard]] int port() const { return m_port; }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

  void kill9() { m_process.reset(); }
  void restart() {
    kill9();
    start(m_port);
  }

  /// Charges the service ran for this key (and tenant, "-" when none was sent), by its ledger.
  [[nodiscard]] int executions(const std::string& key, const std::string& tenant = "-") const {
    std::ifstream in(m_ledger);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string t, k;
      words >> t >> k;
      // The proxy passes the key on as the client sent it: bare (k) or as an sf-string ("k").
      n += (t == tenant && (k == key || k == "\"" + key + "\"")) ? 1 : 0;
    }
    return n;
  }

 private:
  void start(int port) {
    // Debian's python3 has python3-flask (./run PACKAGES).
    m_process =
        std::make_unique<ServeProcess>(ServeProcess::Program{{"/usr/bin/python3", IDEM_SOURCE_DIR "/resources/sample/charge_app.py",
                                                              "--port", std::to_string(port), "--ledger", m_ledger}},
                                       m_ledger + ".log");
    m_port = m_process->port();
  }

  std::string m_ledger;
  std::unique_ptr<ServeProcess> m_process;  // destroyed: SIGKILL
  int m_port = 0;
};

/// The admin listener's port, from a proxy's banner; 0 when it names none.
inline int adminPortOf(const ServeProcess& proxy) { return proxy.adminPort(); }

/// A sample without labels from a /metrics body; -1 when absent.
inline long long metricSample(const std::string& body, const std::string& name) {
  const auto at = body.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stoll(body.substr(at + name.size() + 2));
}

/// A fresh database, the sample service, and `idemctl proxy` in front of it.
struct ProxyRig {
  /// extra: more `idemctl proxy` flags (e.g. --upstream-timeout 1s).
  explicit ProxyRig(const std::string& prefix, const std::vector<std::string>& extra = {},
                    const std::string& policy = kProxyPolicy)
      : db(prefix, Schema::Store),  // a proxy's store has no demo tables
        dir(std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(getpid()))),
        upstream((std::filesystem::create_directories(dir), (dir / "ledger.txt").string())) {
    std::ofstream(dir / "policy.json") << policy;
    startProxy(extra);
  }
  ~ProxyRig() {
    proxy.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }

  void startProxy(const std::vector<std::string>& extra) {
    std::vector<std::string> args{"--db",       proxyDb.empty() ? db.conninfo() : proxyDb,
                                  "--policy",   (dir / "policy.json").string(),
                                  "--upstream", upstream.url(),
                                  "--listen",   "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    args = withTenantSource(std::move(args));  // kProxyPolicy names none
    proxy.reset();
    proxy = std::make_unique<ServeProcess>(args, (dir / "proxy.err").string(), "proxy");
  }

  [[nodiscard]] int adminPort() const { return adminPortOf(*proxy); }
  [[nodiscard]] std::unique_ptr<client::Client> client() const {
    return std::make_unique<client::Client>("127.0.0.1", proxy->port());
  }
  /// Trace rows with this key and outcome (the trace is flushed every 100 ms).
  long long events(const std::string& key, const std::string& outcome) const {
    auto c = db.connect();
    return c.exec("SELECT count(*) AS n FROM idem.events WHERE idem_key = $1 AND outcome = $2", {key, outcome})
        .integer(0, "n");
  }
  [[nodiscard]] std::string proxyLog() const {
    std::ifstream in(dir / "proxy.err");
    return {std::istreambuf_iterator<char>(in), {}};
  }

  TestDatabase db;
  std::string proxyDb;  // the proxy's --db when not the database owner's (a least-privilege role)
  std::filesystem::path dir;
  UpstreamApp upstream;
  std::unique_ptr<ServeProcess> proxy;
};

inline http::Headers charge(const std::string& key, const http::Headers& more = {}) {
  http::Headers h{{"Content-Type", "application/json"}};
  if (!key.empty()) h.emplace_back("Idempotency-Key", key);
  h.insert(h.end(), more.begin(), more.end());
  return h;
}

inline const std::string kCharge = R"({"amount":1000,"currency":"usd"})";

}  // namespace idem::test
