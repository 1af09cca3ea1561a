// SIGHUP reloads `idemctl proxy` and `idemctl serve` without a restart (issue 31, item 5;
// docs/proxy.md, "Reloading"), each a real process over a real store and the sample service:
// - observe → required: the keyless request that passed gets 400 after the reload; a key claimed
//   before it replays after it; each key names the policy version that decided it.
// - a policy file with problems is refused whole (every problem with its line), the old policy
//   stays enforced; a good file then applies.
// - a request in flight across the reload finishes under the policy it began with.
// - a changed listener setting is reported "needs a restart" and ignored; the access log is
//   reopened (logrotate); a change of tenant source is refused.
#include <QtTest>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>

#include "tests/proxy/proxy_support.h"

using namespace idem;
using nlohmann::json;
using test::charge;
using test::kCharge;

namespace {
namespace fs = std::filesystem;

// Not raw strings: moc reads raw strings as ordinary ones and would lose the test class.
std::string policyWith(const std::string& rollout, const std::string& cache = "after-start",
                       const std::string& tenant = "\"single_tenant\": true") {
  return "{\"docs_url\": \"https://docs.test/idempotency\", " + tenant +
         ", \"tiers\": [{\"name\": \"charges\", \"routes\": [\"POST /v1/charges\"], \"ttl\": \"1h\", \"lease\": "
         "\"10s\", \"fingerprint\": {\"mode\": \"json\"}, \"cache\": \"" +
         cache + "\", \"rollout\": \"" + rollout + "\"}]}";
}

// Two problems, each on its own line: both are reported, with their lines.
const char* const kBrokenPolicy =
    "{\"docs_url\": \"https://docs.test/idempotency\", \"single_tenant\": true,\n"
    "  \"tiers\": [{\"name\": \"charges\", \"routes\": [\"POST /v1/charges\"],\n"
    "    \"ttl\": \"1x\",\n"
    "    \"rollout\": \"sometimes\"}]}\n";

/// Written whole and renamed into place, as an editor or a configuration manager does.
void writeFile(const fs::path& path, const std::string& text) {
  const fs::path next = path.string() + ".new";
  std::ofstream(next) << text;
  fs::rename(next, path);
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

long long reloads(const std::string& metrics, const std::string& result) {
  const std::string series = "idem_policy_reloads_total{result=\"" + result + "\"} ";
  const auto at = metrics.find(series);
  return at == std::string::npos ? -1 : std::stoll(metrics.substr(at + series.size()));
}

/// A fresh store, the sample service and `idemctl <command>` with the flags given here only (no
/// tenant flag: the policy names its source, so a reload can try to change it).
struct ReloadRig {
  explicit ReloadRig(const std::string& prefix, const std::string& policy, std::vector<std::string> extra = {},
                     const std::string& command = "proxy")
      : db(prefix, command == "proxy" ? test::Schema::Store : test::Schema::StoreAndDemo),
        dir(fs::temp_directory_path() / (prefix + "_" + std::to_string(getpid()))),
        upstream((fs::create_directories(dir), (dir / "ledger.txt").string())) {
    writeFile(policyFile(), policy);
    std::vector<std::string> argv{std::getenv("IDEMCTL"), command, "--db", db.conninfo(), "--policy",
                                  policyFile().string(), "--listen", "127.0.0.1:0", "--admin-listen",
                                  "127.0.0.1:0"};
    if (command == "proxy") argv.insert(argv.end(), {"--upstream", upstream.url()});
    if (std::find(extra.begin(), extra.end(), "--config") == extra.end())
      extra.insert(extra.end(), {"--access-log", "off"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    process = std::make_unique<test::ServeProcess>(test::ServeProcess::Program{argv}, (dir / "err.log").string());
  }
  ~ReloadRig() {
    process.reset();
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }

  [[nodiscard]] fs::path policyFile() const { return dir / "policy.json"; }
  [[nodiscard]] client::Client client() const { return client::Client("127.0.0.1", process->port()); }
  [[nodiscard]] client::Client admin() const { return client::Client("127.0.0.1", process->adminPort()); }
  [[nodiscard]] int version() const { return json::parse(admin().get("/healthz").body).at("policy_version"); }
  [[nodiscard]] std::string metrics() const { return admin().get("/metrics").body; }
  [[nodiscard]] std::string log() const { return readFile(dir / "err.log"); }
  /// The policy version recorded on a key's row: the one that decided it.
  [[nodiscard]] int keyVersion(const std::string& key) const {
    auto c = db.connect();
    return static_cast<int>(
        c.exec("SELECT policy_version AS v FROM idem.keys WHERE idem_key = $1", {key}).integer(0, "v"));
  }
  /// SIGHUP, then waits until the process counted the reload (`result`: applied or refused).
  bool reload(const std::string& result) {
    const long long before = reloads(metrics(), result);
    process->kill(SIGHUP);
    for (int i = 0; i < 100; ++i, QThread::msleep(50))
      if (reloads(metrics(), result) > before) return true;
    return false;
  }

  test::TestDatabase db;
  fs::path dir;
  test::UpstreamApp upstream;
  std::unique_ptr<test::ServeProcess> process;
};

}  // namespace

class TestReload : public QObject {
  Q_OBJECT

 private slots:
  void observeBecomesRequiredOnSighup() {
    ReloadRig rig("px_reload_rollout", policyWith("observe"));
    auto c = rig.client();
    QCOMPARE(c.post("/v1/charges", charge(""), kCharge).status, 201);  // observe: the keyless request passes
    QCOMPARE(c.post("/v1/charges", charge("before-1"), kCharge).status, 201);
    const int before = rig.version();
    QCOMPARE(reloads(rig.metrics(), "applied"), 0LL);

    writeFile(rig.policyFile(), policyWith("required"));
    QVERIFY(rig.reload("applied"));
    const int after = rig.version();
    QVERIFY(after != before);
    QCOMPARE(test::metricSample(rig.metrics(), "idem_policy_version"), static_cast<long long>(after));

    const auto keyless = c.post("/v1/charges", charge(""), kCharge);
    QCOMPARE(keyless.status, 400);
    QVERIFY2(keyless.body.find("key-missing") != std::string::npos, keyless.body.c_str());
    // The key claimed before the reload replays after it: the work ran once.
    const auto retry = c.post("/v1/charges", charge("before-1"), kCharge);
    QCOMPARE(retry.status, 201);
    QCOMPARE(retry.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(rig.upstream.executions("before-1"), 1);
    QCOMPARE(c.post("/v1/charges", charge("after-1"), kCharge).status, 201);
    // Each key names the version that decided it (explain and the console read it).
    QCOMPARE(rig.keyVersion("before-1"), before);
    QCOMPARE(rig.keyVersion("after-1"), after);
    // The published policy is the new one.
    const json published =
        json::parse(c.get("/idempotency", {{"Accept", "application/json"}}).body);
    QCOMPARE(published.at("policy_version").get<int>(), after);
    const std::string log = rig.log();
    QVERIFY2(log.find("reload applied: policy version " + std::to_string(after)) != std::string::npos, log.c_str());
    QCOMPARE(reloads(rig.metrics(), "refused"), 0LL);
  }

  void aBrokenPolicyIsRefusedWholeAndTheOldOneStays() {
    ReloadRig rig("px_reload_broken", policyWith("required"));
    auto c = rig.client();
    const int before = rig.version();
    writeFile(rig.policyFile(), kBrokenPolicy);
    QVERIFY(rig.reload("refused"));
    QCOMPARE(rig.version(), before);
    QCOMPARE(c.post("/v1/charges", charge(""), kCharge).status, 400);  // still required
    const std::string log = rig.log();
    QVERIFY2(log.find("reload refused, policy version " + std::to_string(before) + " stays in force") !=
                 std::string::npos,
             log.c_str());
    // Every problem, each with its place in the file.
    QVERIFY2(log.find("line 3, column") != std::string::npos, log.c_str());
    QVERIFY2(log.find("line 4, column") != std::string::npos, log.c_str());
    QCOMPARE(reloads(rig.metrics(), "applied"), 0LL);

    // Fixed, the next SIGHUP applies it.
    writeFile(rig.policyFile(), policyWith("observe"));
    QVERIFY(rig.reload("applied"));
    QCOMPARE(c.post("/v1/charges", charge(""), kCharge).status, 201);
  }

  void aRequestInFlightFinishesUnderItsOwnPolicy() {
    ReloadRig rig("px_reload_inflight", policyWith("required", "after-start"));
    const int before = rig.version();
    const int port = rig.process->port();
    // Under after-start a 500 is the key's answer; the policy swapped in meanwhile (2xx-only)
    // would release it instead.
    auto slow = std::async(std::launch::async, [port] {
      client::Client c("127.0.0.1", port, std::chrono::seconds(30));
      return c.post("/v1/charges", charge("slow-1", {{"X-Test-Sleep-Ms", "2500"}, {"X-Test-Status", "500"}}),
                    kCharge);
    });
    QTRY_COMPARE_WITH_TIMEOUT(rig.upstream.executions("slow-1"), 1, 5000);  // with the service now
    writeFile(rig.policyFile(), policyWith("required", "2xx-only"));
    QVERIFY(rig.reload("applied"));
    QVERIFY(slow.wait_for(std::chrono::seconds(0)) != std::future_status::ready);  // still in flight
    QCOMPARE(slow.get().status, 500);

    auto c = rig.client();
    const auto retry = c.post("/v1/charges", charge("slow-1"), kCharge);
    QCOMPARE(retry.status, 500);  // stored under the policy it began with
    QCOMPARE(retry.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(rig.upstream.executions("slow-1"), 1);
    QCOMPARE(rig.keyVersion("slow-1"), before);
    // A request that starts now is under 2xx-only: its 500 is not stored, the retry runs again.
    QCOMPARE(c.post("/v1/charges", charge("fresh-1", {{"X-Test-Status", "500"}}), kCharge).status, 500);
    QCOMPARE(c.post("/v1/charges", charge("fresh-1", {{"X-Test-Status", "500"}}), kCharge).status, 500);
    QCOMPARE(rig.upstream.executions("fresh-1"), 2);
  }

  void restartOnlySettingsAreReportedAndTheAccessLogIsReopened() {
    const fs::path config = fs::temp_directory_path() / ("px_reload_config_" + std::to_string(getpid()) + ".toml");
    const fs::path access = fs::temp_directory_path() / ("px_reload_access_" + std::to_string(getpid()) + ".log");
    const std::string accessLine = "access-log = \"" + access.string() + "\"\n";
    writeFile(config, accessLine + "trace-fold = 3\n");
    ReloadRig rig("px_reload_config", policyWith("required"), {"--config", config.string()});
    auto c = rig.client();
    QCOMPARE(c.post("/v1/charges", charge("logged-1"), kCharge).status, 201);
    QTRY_VERIFY(readFile(access).find("logged-1") != std::string::npos);

    fs::rename(access, access.string() + ".1");  // logrotate moves the file, then sends SIGHUP
    writeFile(config, accessLine + "trace-fold = 7\n");
    QVERIFY(rig.reload("applied"));
    const std::string log = rig.log();
    QVERIFY2(log.find("needs a restart: --trace-fold (running with 3; the settings now say 7)") != std::string::npos,
             log.c_str());
    QVERIFY2(log.find("the policy is unchanged") != std::string::npos, log.c_str());
    QCOMPARE(c.post("/v1/charges", charge("logged-2"), kCharge).status, 201);
    QTRY_VERIFY(readFile(access).find("logged-2") != std::string::npos);  // the reopened file
    QVERIFY(readFile(access).find("logged-1") == std::string::npos);
    QVERIFY(readFile(access.string() + ".1").find("logged-2") == std::string::npos);
    std::error_code ignored;
    fs::remove(config, ignored);
    fs::remove(access, ignored);
    fs::remove(access.string() + ".1", ignored);
  }

  void aChangeOfTenantSourceIsRefused() {
    ReloadRig rig("px_reload_tenant", policyWith("required"));
    const int before = rig.version();
    writeFile(rig.policyFile(), policyWith("required", "after-start", "\"tenant_from_authorization\": true"));
    QVERIFY(rig.reload("refused"));
    QCOMPARE(rig.version(), before);
    const std::string log = rig.log();
    QVERIFY2(log.find("the tenant source would change (from single tenant to authorization digest)") !=
                 std::string::npos,
             log.c_str());
    // Still one key space: a key answers whoever sends it, as before.
    auto c = rig.client();
    QCOMPARE(c.post("/v1/charges", charge("tenant-1", {{"Authorization", "Bearer a"}}), kCharge).status, 201);
    const auto other = c.post("/v1/charges", charge("tenant-1", {{"Authorization", "Bearer b"}}), kCharge);
    QCOMPARE(other.header("Idempotent-Replayed"), std::string("true"));
  }

  void serveReloadsToo() {
    const std::string observe =
        "{\"docs_url\": \"https://docs.test/idempotency\", \"tenant_header\": \"Account-Id\", \"tiers\": [{\"name\": \"payments\", \"routes\": "
        "[\"POST /v1/payments\"], \"ttl\": \"1h\", \"rollout\": \"observe\"}]}";
    std::string required = observe;
    required.replace(required.find("observe"), 7, "required");
    ReloadRig rig("px_reload_serve", observe, {}, "serve");
    auto c = rig.client();
    const http::Headers keyless{{"Content-Type", "application/json"}, {"Account-Id", "acct_1"}};
    const std::string payment = "{\"amount\":1000,\"currency\":\"usd\",\"customer\":\"cus_1\"}";
    QCOMPARE(c.post("/v1/payments", keyless, payment).status, 201);
    writeFile(rig.policyFile(), required);
    QVERIFY(rig.reload("applied"));
    QCOMPARE(c.post("/v1/payments", keyless, payment).status, 400);
  }
};

QTEST_GUILESS_MAIN(TestReload)
#include "tst_reload.moc"
