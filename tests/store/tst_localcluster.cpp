// The private cluster of the tests and the demo (core/cluster/localcluster.cpp) is not an open
// door on the machine: its socket folder and socket are the server user's alone, no rule in
// pg_hba.conf says trust, a role without a password cannot log in, TCP (when asked for) wants a
// password, and no folder outside the cluster's own has its permissions changed.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QtTest>
#include <cctype>
#include <filesystem>

#include "core/cluster/localcluster.h"
#include "core/store/pg.h"
#include "tests/support/testdb.h"

using namespace idem;
namespace fs = std::filesystem;

namespace {

mode_t modeOf(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return static_cast<mode_t>(-1);
  return st.st_mode & 07777;
}

/// A folder of our own under /tmp (0755, as the suites' cluster folder is), removed when done.
struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/idem-lc-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
    chmod(path.c_str(), 0755);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string path;
};

struct Running {
  explicit Running(const std::string& root, int port = 5432) : cluster(root, port) {}
  ~Running() {
    try {
      cluster.stop();
    } catch (...) {
    }
  }
  cluster::LocalCluster cluster;
};

bool canConnect(const std::string& conninfo, std::string* error = nullptr) {
  try {
    pg::Connection c(conninfo + " connect_timeout=5");
    return true;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

}  // namespace

class TestLocalCluster : public QObject {
  Q_OBJECT

 private slots:
  void socketIsTheServerUsersAloneAndNothingTrusts() {
    TempDir dir;
    Running r(dir.path + "/c");
    r.cluster.start();
    const std::string sock = r.cluster.root() + "/sock";
    QVERIFY2((modeOf(sock) & 0077) == 0, qPrintable(QString::number(modeOf(sock), 8)));
    QVERIFY2((modeOf(sock + "/.s.PGSQL.5432") & 0077) == 0,
             qPrintable(QString::number(modeOf(sock + "/.s.PGSQL.5432"), 8)));
    QVERIFY2((modeOf(r.cluster.root()) & 0077) == 0, qPrintable(QString::number(modeOf(r.cluster.root()), 8)));

    pg::Connection admin(r.cluster.conninfo());
    // The server's own reading of pg_hba.conf: not one trust rule.
    auto rules = admin.exec("SELECT count(*) AS n, count(*) FILTER (WHERE auth_method = 'trust') AS trust "
                            "FROM pg_hba_file_rules WHERE error IS NULL");
    QVERIFY(rules.integer(0, "n") > 0);
    QCOMPARE(rules.integer(0, "trust"), 0LL);
    // A role without a password cannot log in through the socket, one with its password can.
    admin.exec("CREATE ROLE lc_nopass LOGIN");
    admin.exec("CREATE ROLE lc_withpass LOGIN PASSWORD 'lc-secret'");
    const std::string base = "host=" + sock + " port=5432 dbname=postgres";
    std::string error;
    QVERIFY2(!canConnect(base + " user=lc_nopass", &error), "a role without a password logged in");
    QVERIFY2(!canConnect(base + " user=lc_withpass password=wrong"), "a wrong password was accepted");
    QVERIFY2(canConnect(base + " user=lc_withpass password=lc-secret", &error), error.c_str());
  }

  // Run as root, the server is the postgres user's: another local user is turned away.
  void anotherLocalUserCannotConnect() {
    if (geteuid() != 0) QSKIP("needs root to act as another local user");
    TempDir dir;
    Running r(dir.path + "/c");
    r.cluster.start();
    std::string out;
    const int rc = cluster::runProgram({"/usr/sbin/runuser", "-u", "nobody", "--", "/usr/bin/psql", "-X", "-w", "-c",
                                        "SELECT 1", r.cluster.conninfo()},
                                       &out, false);
    QVERIFY2(rc != 0, out.c_str());
  }

  // The folders above the cluster's are not the cluster's to change: as root, a folder the
  // postgres user cannot enter is reported, not opened up.
  void leavesParentFoldersAlone() {
    TempDir dir;
    const std::string parent = dir.path + "/private";
    fs::create_directories(parent);
    chmod(parent.c_str(), 0700);
    Running r(parent + "/c");
    if (geteuid() == 0) {
      try {
        r.cluster.start();
        QFAIL("a cluster under a folder the postgres user cannot enter started");
      } catch (const std::runtime_error& e) {
        const std::string message = e.what();
        QVERIFY2(message.find(parent) != std::string::npos && message.find("postgres") != std::string::npos,
                 e.what());
      }
    } else {
      r.cluster.start();  // the server runs as us: nothing to open up
    }
    QCOMPARE(modeOf(parent), mode_t(0700));
    QCOMPARE(modeOf(dir.path), mode_t(0755));
  }

  // `idemctl cluster conninfo` names the port the cluster was started on without being told it
  // again (it once printed 5432 unless given the same --port), running or stopped; a --port that
  // contradicts the running cluster is refused, not printed; one that is no port is a usage error.
  void theCommandNamesThePortTheClusterWasStartedOn() {
    TempDir dir;
    const std::string root = dir.path + "/c";
    const std::string port = std::to_string(test::freeLoopbackPort());
    // runIdemctl, not QProcess: Qt's clone() trips clang 14's ThreadSanitizer runtime.
    const auto idemctl = [](const std::vector<std::string>& args, int* exitCode = nullptr) {
      std::string out;
      const int rc = test::runIdemctl(args, &out);
      if (exitCode) *exitCode = rc;
      while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
      return out;
    };
    struct Stop {
      std::string root;
      ~Stop() { test::runIdemctl({"cluster", "stop", "--dir", root}, nullptr); }
    } stop{root};
    int rc = -1;
    const std::string started = idemctl({"cluster", "start", "--dir", root, "--port", port}, &rc);
    QVERIFY2(rc == 0 && started.find(" port=" + port + " ") != std::string::npos, started.c_str());
    QCOMPARE(idemctl({"cluster", "conninfo", "--dir", root}), started);
    QVERIFY(canConnect(idemctl({"cluster", "conninfo", "--dir", root})));
    const std::string wrong = idemctl({"cluster", "conninfo", "--dir", root, "--port", "5432"}, &rc);
    QVERIFY2(rc != 0 && wrong.find("running on port " + port) != std::string::npos, wrong.c_str());
    const std::string notAPort = idemctl({"cluster", "conninfo", "--dir", root, "--port", "abc"}, &rc);
    QVERIFY2(rc == 2 && notAPort.find("--port: a port number from 1 to 65535, not 'abc'") != std::string::npos,
             notAPort.c_str());
    QVERIFY2(idemctl({"cluster", "status", "--dir", root}, &rc) == "running" && rc == 0, "not running");
    idemctl({"cluster", "stop", "--dir", root}, &rc);
    QCOMPARE(rc, 0);
    QCOMPARE(idemctl({"cluster", "conninfo", "--dir", root}), started);  // stopped: the last start's
    QVERIFY2(idemctl({"cluster", "start", "--dir", root}, &rc) == started && rc == 0, "restarted on another port");
  }

  // Asked to listen on loopback TCP, the cluster wants a password there (scram), never trust.
  void loopbackTcpWantsAPassword() {
    TempDir dir;
    const int port = test::freeLoopbackPort();
    Running r(dir.path + "/c", port);
    r.cluster.listenOnLoopback();
    r.cluster.start();
    {
      pg::Connection admin(r.cluster.conninfo());
      admin.exec("CREATE ROLE lc_tcp LOGIN PASSWORD 'tcp-secret'");
    }
    const std::string tcp = "host=127.0.0.1 port=" + std::to_string(port) + " dbname=postgres sslmode=disable";
    std::string error;
    QVERIFY2(!canConnect(tcp + " user=" + cluster::LocalCluster::kSuperuser + " password=x"),
             "the superuser logged in over TCP with any password");
    QVERIFY2(!canConnect(tcp + " user=lc_tcp password=wrong"), "a wrong password was accepted over TCP");
    QVERIFY2(canConnect(tcp + " user=lc_tcp password=tcp-secret", &error), error.c_str());
  }
};

QTEST_GUILESS_MAIN(TestLocalCluster)
#include "tst_localcluster.moc"
