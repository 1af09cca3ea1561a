// `idemctl demo --headless` end to end: private cluster, seeded history with the incident,
// live traffic, then SIGTERM stops everything and exits 0; with --through-proxy, the sample
// service behind `idemctl proxy` on the same store.
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QtTest>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/client/client.h"
#include "core/store/pg.h"
#include "tests/support/testdb.h"

extern char** environ;

using namespace idem;

/// `idemctl demo --headless [extra…]` running until stop(); its output up to "Stop with Ctrl-C".
/// A failed check returns early: the destructor never leaves the demo (and its cluster) behind.
struct DemoRun {
  pid_t pid = -1;
  int out = -1;
  std::string dir;
  std::string text;
  bool reaped = false;

  explicit DemoRun(const std::vector<std::string>& extra) {
    char tmpl[] = "/tmp/idem-demo-test-XXXXXX";
    if (!mkdtemp(tmpl)) return;
    dir = tmpl;
    // Run as root the server is postgres's, and the cluster refuses a folder it cannot enter.
    chmod(tmpl, 0755);
    std::vector<std::string> args{std::getenv("IDEMCTL"), "demo", "--headless", "--data", dir};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (pipe(fds) != 0) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
    if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    out = fds[0];
    char buf[4096];
    while (pid > 0 && text.find("Stop with Ctrl-C") == std::string::npos) {
      ssize_t n = read(out, buf, sizeof buf);
      if (n <= 0) break;
      text.append(buf, static_cast<std::size_t>(n));
    }
  }
  ~DemoRun() {
    if (!reaped && pid > 0) {
      kill(pid, SIGTERM);
      int st = 0;
      for (int i = 0; i < 300 && waitpid(pid, &st, WNOHANG) == 0; ++i) usleep(100 * 1000);
      if (waitpid(pid, &st, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
      }
    }
    if (out >= 0) close(out);
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
  /// The rest of the line after `label`.
  [[nodiscard]] std::string lineAfter(const std::string& label) const {
    const auto at = text.find(label);
    if (at == std::string::npos) return {};
    const auto from = at + label.size();
    return text.substr(from, text.find('\n', from) - from);
  }
  [[nodiscard]] bool running() const { return text.find("Stop with Ctrl-C") != std::string::npos; }
  /// The rest of the line after `label` in the demo's output.
  [[nodiscard]] std::string after(const std::string& label) const {
    const auto at = text.find(label);
    if (at == std::string::npos) return {};
    const auto from = at + label.size();
    return text.substr(from, text.find_first_of(" \n", from) - from);
  }
  /// SIGTERM, then the exit status.
  int stop() {
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    reaped = true;
    return status;
  }
};

class TestDemo : public QObject {
  Q_OBJECT

 private slots:
  void headlessDemoSeedsServesAndStops() {
    DemoRun demo({});
    QVERIFY2(demo.running(), demo.text.c_str());
    QVERIFY2(demo.text.find("THE INCIDENT") != std::string::npos, demo.text.c_str());

    const std::string conninfo = demo.lineAfter("store (libpq):  ");
    const auto u = demo.text.find("endpoint:       http://127.0.0.1:");
    const int port = std::stoi(demo.text.substr(u + 33));

    // The incident is in the store: two ledger rows for one key, generations 1 and 2.
    {
      pg::Connection conn(conninfo);
      QCOMPARE(
          conn.exec("SELECT count(*) AS n FROM idem_demo.ledger WHERE idem_key = 'checkout-8812-pay'").integer(0, "n"),
          2LL);
      // The demo names a charge id to paste into Ctrl+K: the incident's duplicate, then the original.
      auto ids = conn.exec("SELECT id FROM idem_demo.ledger WHERE idem_key = 'checkout-8812-pay' ORDER BY generation");
      const std::string printed = demo.after("Ctrl+K, paste ");
      QVERIFY2(printed.starts_with("pay_") && printed == ids.str(1, "id"), demo.text.c_str());
      QVERIFY2(demo.text.find(ids.str(0, "id") + " is the one they meant") != std::string::npos, demo.text.c_str());
      QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem.keys WHERE state = 'processing' AND lease_until < now()")
                   .integer(0, "n"),
               1LL);
    }
    // The endpoint answers, and live traffic is flowing.
    client::Client client("127.0.0.1", port);
    auto r = client.post(
        "/v1/payments",
        {{"Content-Type", "application/json"}, {"Idempotency-Key", "demo-test-1"}, {"Account-Id", "acct_test"}},
        R"({"amount":1000,"currency":"usd","customer":"cus_1"})");
    QCOMPARE(r.status, 201);
    std::string explained;
    QCOMPARE(test::runIdemctl({"explain", "--db", conninfo, "--key", "checkout-8812-pay", "--scope",
                               "acct_acme POST /v1/payments", "--format", "json"},
                              &explained),
             0);
    QVERIFY2(explained.find("\"executions\": 2") != std::string::npos ||
                 explained.find("\"executions\":2") != std::string::npos,
             explained.c_str());

    const int status = demo.stop();
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 0);
    QVERIFY(!std::filesystem::exists(demo.dir + "/cluster/data/postmaster.pid"));  // the cluster stopped
  }

  // --through-proxy: the sample Flask service behind `idemctl proxy` on the demo's store; what
  // went through the proxy is in the store the console reads, and the service ran each charge once.
  void throughProxyPutsTheSampleServiceBehindTheProxy() {
    DemoRun demo({"--through-proxy"});
    QVERIFY2(demo.running(), demo.text.c_str());
    const std::string conninfo = demo.lineAfter("store (libpq):  ");
    const std::string proxyUrl = demo.after("idemctl proxy in front of it on ");
    const std::string serviceUrl = demo.after("sample service (Flask) on ");
    QVERIFY2(proxyUrl.starts_with("http://127.0.0.1:") && serviceUrl.starts_with("http://127.0.0.1:"),
             demo.text.c_str());
    client::Client proxy("127.0.0.1", std::stoi(proxyUrl.substr(17)));
    const http::Headers h{
        {"Content-Type", "application/json"}, {"Idempotency-Key", "through-proxy-1"}, {"Account-Id", "acct_test"}};
    const std::string body = R"({"amount":1000,"currency":"usd","customer":"cus_1"})";
    const auto first = proxy.post("/v1/payments", h, body);
    QCOMPARE(first.status, 201);
    QVERIFY(first.body.find("\"id\":\"ch_") != std::string::npos);  // the sample service's own answer
    const auto again = proxy.post("/v1/payments", h, body);
    QCOMPARE(again.status, 201);
    QCOMPARE(again.header("Idempotent-Replayed"), std::string("true"));
    QCOMPARE(again.body, first.body);
    client::Client service("127.0.0.1", std::stoi(serviceUrl.substr(17)));
    const auto count = nlohmann::json::parse(service.get("/executions").body);
    int charged = 0;
    for (const auto& [who, n] : count["by_key"].items())
      if (who.ends_with(" through-proxy-1")) charged += n.get<int>();  // "<tenant> <key as sent>"
    QCOMPARE(charged, 1);

    // The console's store has the key and its decisions, and the proxy's own live traffic.
    pg::Connection conn(conninfo);
    long long traced = 0, live = 0;
    for (int i = 0; i < 100 && (traced < 2 || live == 0); ++i) {
      traced = conn.exec("SELECT count(*) AS n FROM idem.events WHERE idem_key = 'through-proxy-1' AND outcome IN "
                         "('executed', 'replayed')")
                   .integer(0, "n");
      live = conn.exec("SELECT count(*) AS n FROM idem.events WHERE idem_key LIKE 'proxy-%'").integer(0, "n");
      if (traced < 2 || live == 0) QThread::msleep(100);
    }
    QCOMPARE(traced, 2LL);
    QVERIFY2(live > 0, "no live traffic went through the proxy");

    const int status = demo.stop();
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 0);
  }
};

QTEST_GUILESS_MAIN(TestDemo)
#include "tst_demo.moc"
