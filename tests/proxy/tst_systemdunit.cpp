// The proxy as idem-proxy@.service starts it: under the unit's LimitNOFILE, with the unit's own
// command line (--config and the shipped example instance, resources/examples/proxy-main.toml)
// and its example policy. Only what names this machine's places is swapped for the test's, by
// flags that beat the file: the store, the upstream, the ports, the policy file's path. Both numbers come from the shipped files, so raising a default
// flag or lowering the limit past what the proxy's descriptor budget accepts fails here. And
// every system call it makes from start through a reload (the unit's ExecReload) to a SIGTERM
// stop, and every one a sweeper round makes,
// is one the units' SystemCallFilter admits (systemd applies the filter only when it starts the
// unit, which a container cannot).
#include <signal.h>

#include <QDir>
#include <QProcess>
#include <QtTest>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/client/client.h"
#include "core/endpoint/server.h"
#include "core/proxy/descriptorbudget.h"
#include "core/proxy/upstream.h"
#include "tests/proxy/raw_upstream.h"

using namespace idem;

namespace {

std::string readSource(const std::string& path) {
  std::ifstream in(std::string(IDEM_SOURCE_DIR "/") + path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The value of a `Name=value` line in a unit or env file; "" when absent.
std::string setting(const std::string& text, const std::string& name) {
  std::smatch m;
  const std::regex line("(^|\n)" + name + "=([^\n]*)");
  return std::regex_search(text, m, line) ? m[2].str() : std::string();
}

// The arguments the unit's ExecStart gives idemctl proxy, the unit's configuration path swapped
// for the shipped example's.
std::vector<std::string> unitArguments() {
  const std::string exec = setting(readSource("resources/systemd/idem-proxy@.service.in"), "ExecStart");
  std::istringstream words(exec);
  std::vector<std::string> args;
  for (std::string w; words >> w;) args.push_back(w);
  // "@IDEM_BINDIR@/idemctl proxy --config /etc/idem/proxy-%i.toml"
  if (args.size() != 4 || args[1] != "proxy" || args[2] != "--config") return {};
  return {"--config", IDEM_SOURCE_DIR "/resources/examples/proxy-main.toml"};
}

// An integer key of the example TOML file (`max-connections = 4096`), or the flag's default.
int intSetting(const std::string& key, int fallback) {
  std::smatch m;
  const std::string text = readSource("resources/examples/proxy-main.toml");
  return std::regex_search(text, m, std::regex("(^|\n)" + key + " *= *([0-9]+)")) ? std::stoi(m[2].str()) : fallback;
}

// The system calls a systemd filter expression names ("@system-service", "~@privileged
// @resources" without the "~"), groups expanded as `systemd-analyze syscall-filter` lists them.
std::set<std::string> syscallsNamed(const std::string& expression) {
  std::set<std::string> out;
  std::istringstream words(expression);
  for (std::string word; words >> word;) {
    if (word.front() != '@') {
      out.insert(word);
      continue;
    }
    QProcess p;
    p.start("/usr/bin/systemd-analyze", {"syscall-filter", QString::fromStdString(word)});
    p.waitForFinished(30'000);
    std::istringstream lines(p.readAllStandardOutput().toStdString());
    std::string line;
    std::getline(lines, line);  // the group's own name
    while (std::getline(lines, line)) {
      const auto name = line.substr(std::min(line.find_first_not_of(' '), line.size()));
      if (name.empty() || name.front() == '#') continue;
      const auto more = syscallsNamed(name);
      out.insert(more.begin(), more.end());
    }
  }
  return out;
}

// The system calls in an `strace -f` log ("PID name(args) = ...").
std::set<std::string> syscallsIn(const std::string& path) {
  std::ifstream in(path);
  std::set<std::string> out;
  const std::regex call("^\\d+ +([a-z0-9_]+)\\(");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, call)) out.insert(m[1].str());
  return out;
}

// The calls in `made` the units' filter (resources/systemd/hardening.conf) refuses, space
// separated: the first SystemCallFilter= allows, a later "~" one denies.
std::string refusedByTheUnitsFilter(const std::set<std::string>& made) {
  std::set<std::string> allowed, denied;
  std::istringstream hardening(readSource("resources/systemd/hardening.conf"));
  for (std::string line; std::getline(hardening, line);) {
    if (line.rfind("SystemCallFilter=", 0) != 0) continue;
    const std::string value = line.substr(17);
    const auto names = syscallsNamed(value.front() == '~' ? value.substr(1) : value);
    (value.front() == '~' ? denied : allowed).insert(names.begin(), names.end());
  }
  if (!allowed.count("read") || !denied.count("setuid")) return "(no SystemCallFilter in hardening.conf)";
  std::string refused;
  for (const auto& call : made)
    if (!allowed.count(call) || denied.count(call)) refused += call + " ";
  return refused;
}

}  // namespace

class TestSystemdUnit : public QObject {
  Q_OBJECT

 private slots:
  void theUnitsLimitFitsTheExampleFlags() {
    const std::string limit = setting(readSource("resources/systemd/idem-proxy@.service.in"), "LimitNOFILE");
    QVERIFY2(!limit.empty(), "idem-proxy@.service sets no LimitNOFILE");
    QVERIFY2(!unitArguments().empty(), "idem-proxy@.service does not run `idemctl proxy --config FILE`");
    // The proxy's own accounting, with the example file's values or the options' defaults.
    const auto budget = proxy::planDescriptors(
        {static_cast<std::size_t>(intSetting("pool", endpoint::ServerOptions{}.poolSize)),
         static_cast<std::size_t>(
             intSetting("upstream-connections", static_cast<int>(proxy::UpstreamOptions{}.maxConnections))),
         64, static_cast<std::size_t>(gate::Host::kStoreConnectionsWithoutWaiting)},
        std::stoul(limit));
    QVERIFY2(budget.refusal.empty(), budget.refusal.c_str());
    // Not merely accepted: the default client budget is not cut down to fit.
    const int maxConnections = intSetting("max-connections", endpoint::ServerOptions{}.maxConnections);
    QVERIFY2(budget.clientConnections >= static_cast<std::size_t>(maxConnections),
             ("LimitNOFILE=" + limit + " leaves " + std::to_string(budget.clientConnections) +
              " client connections, under --max-connections " + std::to_string(maxConnections))
                 .c_str());
  }

  void theProxyStartsUnderTheUnitsLimitWithTheExampleFlags() {
    const std::string limit = setting(readSource("resources/systemd/idem-proxy@.service.in"), "LimitNOFILE");
    auto flags = unitArguments();
    QVERIFY(!flags.empty());
    flags.insert(flags.end(), {"--admin-listen", "127.0.0.1:0"});
    test::RawUpstreamRig rig("px_unit", readSource("resources/examples/main-policy.json"), flags,
                             {"/usr/bin/prlimit", "--nofile=" + limit + ":" + limit});
    QVERIFY2(rig.proxy->alive(), rig.proxyLog().c_str());
    // The limit is the proxy's own, as systemd would set it.
    std::ifstream limits("/proc/" + std::to_string(rig.proxy->pid()) + "/limits");
    const std::string table{std::istreambuf_iterator<char>(limits), {}};
    QVERIFY2(std::regex_search(table, std::regex("Max open files +" + limit + " +" + limit)), table.c_str());
    // And it enforces the example policy's route.
    client::Client client("127.0.0.1", rig.proxy->port());
    const http::Headers headers{{"Content-Type", "application/json"}, {"Idempotency-Key", "unit-1"}};
    const auto first = client.post("/v1/orders", headers, R"({"item":"a"})");
    const auto again = client.post("/v1/orders", headers, R"({"item":"a"})");
    QCOMPARE(first.status, 201);
    QCOMPARE(again.status, 201);
    QCOMPARE(rig.executions("unit-1"), 1);
  }

  void everySystemCallItMakesPassesTheUnitsFilter() {
#ifdef IDEM_SANITIZED
    QSKIP("a sanitizer's runtime makes system calls of its own; the package ships an unsanitized idemctl");
#endif
    const std::string limit = setting(readSource("resources/systemd/idem-proxy@.service.in"), "LimitNOFILE");
    const std::string trace = QDir::temp().filePath("px_unit_strace_" + QString::number(getpid())).toStdString();
    auto flags = unitArguments();
    QVERIFY(!flags.empty());
    flags.insert(flags.end(), {"--admin-listen", "127.0.0.1:0"});
    test::RawUpstreamRig rig(
        "px_unit_calls", readSource("resources/examples/main-policy.json"), flags,
        {"/usr/bin/strace", "-f", "-qq", "-o", trace, "/usr/bin/prlimit", "--nofile=" + limit + ":" + limit});
    client::Client client("127.0.0.1", rig.proxy->port());
    const http::Headers headers{{"Content-Type", "application/json"}, {"Idempotency-Key", "calls-1"}};
    QCOMPARE(client.post("/v1/orders", headers, R"({"item":"a"})").status, 201);
    QCOMPARE(client.post("/v1/orders", headers, R"({"item":"a"})").status, 201);  // the replay
    QCOMPARE(client::Client("127.0.0.1", rig.proxy->adminPort()).get("/metrics", {}).status, 200);
    std::ifstream children("/proc/" + std::to_string(rig.proxy->pid()) + "/task/" + std::to_string(rig.proxy->pid()) +
                           "/children");
    pid_t proxyPid = 0;
    QVERIFY(children >> proxyPid);
    // Reload it as systemctl reload does (the unit's ExecReload: SIGHUP to the proxy), which
    // reads the files again and writes the policy to the store, all under the same filter.
    QCOMPARE(setting(readSource("resources/systemd/idem-proxy@.service.in"), "ExecReload"),
             std::string("/bin/kill -HUP $MAINPID"));
    QCOMPARE(::kill(proxyPid, SIGHUP), 0);
    QTRY_VERIFY(client::Client("127.0.0.1", rig.proxy->adminPort())
                    .get("/metrics", {})
                    .body.find("idem_policy_reloads_total{result=\"applied\"} 1") != std::string::npos);
    // Stop it as systemctl stop does: SIGTERM to the proxy (strace's child), then strace ends with it.
    QCOMPARE(::kill(proxyPid, SIGTERM), 0);
    QCOMPARE(rig.proxy->wait(), 0);

    const auto made = syscallsIn(trace);
    std::remove(trace.c_str());
    QVERIFY2(made.count("accept") || made.count("accept4"), "the trace holds no accept: not the proxy's");
    const auto refused = refusedByTheUnitsFilter(made);
    QVERIFY2(refused.empty(), ("the unit's SystemCallFilter would refuse: " + refused).c_str());
  }

  void everySystemCallTheSweeperMakesPassesTheUnitsFilter() {
#ifdef IDEM_SANITIZED
    QSKIP("a sanitizer's runtime makes system calls of its own; the package ships an unsanitized idemctl");
#endif
    // One idem-sweep.service round: the example sweep.env's flags, its --db swapped for the test's.
    test::TestDatabase db("px_unit_sweep");
    const std::string trace = QDir::temp().filePath("px_sweep_strace_" + QString::number(getpid())).toStdString();
    QStringList args{"-f",
                     "-qq",
                     "-o",
                     QString::fromStdString(trace),
                     qEnvironmentVariable("IDEMCTL"),
                     "sweep",
                     "--db",
                     QString::fromStdString(db.conninfo())};
    std::istringstream words(setting(readSource("resources/examples/sweep.env"), "IDEM_SWEEP_ARGS"));
    for (std::string w; words >> w;) {
      if (w == "--db") {
        words >> w;
        continue;
      }
      args << QString::fromStdString(w);
    }
    QProcess sweep;
    sweep.start("/usr/bin/strace", args);
    QVERIFY(sweep.waitForFinished(60'000));
    QVERIFY2(sweep.exitStatus() == QProcess::NormalExit && sweep.exitCode() == 0,
             sweep.readAllStandardError().constData());
    const auto made = syscallsIn(trace);
    std::remove(trace.c_str());
    QVERIFY2(made.count("connect"), "the trace holds no connect: the sweeper never reached the store");
    const auto refused = refusedByTheUnitsFilter(made);
    QVERIFY2(refused.empty(), ("the unit's SystemCallFilter would refuse: " + refused).c_str());
  }
};

QTEST_GUILESS_MAIN(TestSystemdUnit)
#include "tst_systemdunit.moc"
