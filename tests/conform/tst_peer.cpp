// idemctl conform against the peer library: tests/bench/peer/charge_service.js with
// node-idempotency on Redis (docs/conformance.md, "What the peer run found"). Skipped, with the
// reason, where node, redis-server or the peer's packages are not installed: this suite never
// installs anything (npm needs the network), so it cannot make CI flaky.
//   cd tests/bench/peer && npm ci        (or IDEM_PEER_NODE_MODULES=/path/to/node_modules)
#include <QProcess>
#include <QStandardPaths>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "tests/conform/conform_run.h"
#include "tests/endpoint/serve_process.h"

using namespace Qt::StringLiterals;

namespace {

// The peer's packages: IDEM_PEER_NODE_MODULES, else tests/bench/peer/node_modules; "" when neither.
std::string peerModules() {
  if (const char* given = std::getenv("IDEM_PEER_NODE_MODULES"); given && std::filesystem::is_directory(given))
    return given;
  const std::string inTree = IDEM_SOURCE_DIR "/tests/bench/peer/node_modules";
  return std::filesystem::is_directory(inTree + "/@node-idempotency/core") ? inTree : std::string();
}

// A loopback port free a moment ago (redis-server cannot pick one itself and say which).
int freePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

}  // namespace

class TestPeer : public QObject {
  Q_OBJECT

 private slots:
  void thePeerLibrarysFailuresAreReported() {
    const auto node = QStandardPaths::findExecutable(u"node"_s);
    const auto redis = QStandardPaths::findExecutable(u"redis-server"_s);
    const auto modules = peerModules();
    if (node.isEmpty() || redis.isEmpty() || modules.empty())
      QSKIP("needs node, redis-server and the peer's packages (cd tests/bench/peer && npm ci, or "
            "IDEM_PEER_NODE_MODULES)");

    const int redisPort = freePort();
    QProcess store;
    store.setProcessChannelMode(QProcess::MergedChannels);
    store.start(redis, {u"--port"_s, QString::number(redisPort), u"--bind"_s, u"127.0.0.1"_s, u"--save"_s, u""_s,
                        u"--appendonly"_s, u"no"_s});
    QByteArray said;
    while (!said.contains("Ready to accept connections") && store.waitForReadyRead(10'000)) said += store.readAll();
    QVERIFY2(said.contains("Ready to accept connections"), said.constData());

    setenv("NODE_PATH", modules.c_str(), 1);  // the script resolves its packages from here
    idem::test::ServeProcess peer(idem::test::ServeProcess::Program{
        {node.toStdString(), IDEM_SOURCE_DIR "/tests/bench/peer/charge_service.js", "--port", "0", "--redis",
         "redis://127.0.0.1:" + std::to_string(redisPort)}});
    const auto run = idem::test::runConform(u"http://127.0.0.1:"_s + QString::number(peer.port()),
                                            {u"--count-url"_s, u"/executions"_s, u"--slow-header"_s,
                                             u"X-Test-Sleep-Ms: 1000"_s});
    store.kill();
    store.waitForFinished();
    QVERIFY2(run.finished.exitedWith(1), run.describe());
    // What docs/conformance.md records: replays lose Location (only status and body are stored),
    // keys are not validated (an empty, unterminated or repeated key executes), and refusals are
    // the sample's {"error","message"} JSON, not problem details.
    QVERIFY2(run.named(u"fail"_s) == (QStringList{u"key-malformed"_s, u"problem-details"_s, u"replay"_s}), run.describe());
    QVERIFY2(run.scenario(u"replay"_s).value(u"reason").toString().contains(u"Location missing"_s), run.describe());
    QVERIFY2(run.named(u"pass"_s) ==
                 (QStringList{u"concurrent"_s, u"first-request"_s, u"key-missing"_s, u"payload-mismatch"_s}),
             run.describe());
  }
};

QTEST_GUILESS_MAIN(TestPeer)
#include "tst_peer.moc"
