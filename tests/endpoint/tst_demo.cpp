// `idemctl demo --headless` end to end: private cluster, seeded history with the incident,
// live traffic, then SIGTERM stops everything and exits 0.
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QtTest>
#include <filesystem>

#include "core/endpoint/client.h"
#include "core/store/pg.h"
#include "tests/support/testdb.h"

extern char** environ;

using namespace idem;

class TestDemo : public QObject {
  Q_OBJECT

 private slots:
  void headlessDemoSeedsServesAndStops() {
    char tmpl[] = "/tmp/idem-demo-test-XXXXXX";
    QVERIFY(mkdtemp(tmpl));
    const std::string dir = tmpl;
    // Run as root the server is postgres's, and the cluster refuses a folder it cannot enter.
    QVERIFY(chmod(tmpl, 0755) == 0);
    std::vector<std::string> args{std::getenv("IDEMCTL"), "demo", "--headless", "--data", dir};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out[2];
    QVERIFY(pipe(out) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDERR_FILENO);
    pid_t pid = -1;
    QVERIFY(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    // A failed check returns early: never leave the demo (and its cluster) running behind us.
    struct Reaper {
      pid_t pid;
      std::string dir;
      bool reaped = false;
      ~Reaper() {
        if (!reaped) {
          kill(pid, SIGTERM);
          int st = 0;
          for (int i = 0; i < 300 && waitpid(pid, &st, WNOHANG) == 0; ++i) usleep(100 * 1000);
          if (waitpid(pid, &st, WNOHANG) == 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
          }
        }
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
      }
    } reaper{pid, dir};

    std::string text;
    char buf[4096];
    while (text.find("Stop with Ctrl-C") == std::string::npos) {
      ssize_t n = read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      text.append(buf, static_cast<std::size_t>(n));
    }
    QVERIFY2(text.find("Stop with Ctrl-C") != std::string::npos, text.c_str());
    QVERIFY2(text.find("THE INCIDENT") != std::string::npos, text.c_str());

    const auto c = text.find("store (libpq):  ");
    const std::string conninfo = text.substr(c + 16, text.find('\n', c) - c - 16);
    const auto u = text.find("endpoint:       http://127.0.0.1:");
    const int port = std::stoi(text.substr(u + 33));

    // The incident is in the store: two ledger rows for one key, generations 1 and 2.
    {
      pg::Connection conn(conninfo);
      QCOMPARE(
          conn.exec("SELECT count(*) AS n FROM idem_demo.ledger WHERE idem_key = 'checkout-8812-pay'").integer(0, "n"),
          2LL);
      QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem.keys WHERE state = 'processing' AND lease_until < now()")
                   .integer(0, "n"),
               1LL);
    }
    // The endpoint answers, and live traffic is flowing.
    endpoint::Client client("127.0.0.1", port);
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

    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    reaper.reaped = true;
    close(out[0]);
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 0);
    QVERIFY(!std::filesystem::exists(dir + "/cluster/data/postmaster.pid"));  // the cluster stopped
  }
};

QTEST_GUILESS_MAIN(TestDemo)
#include "tst_demo.moc"
