// The kit can fail: against tests/conform/flawed_service.py started with one flaw at a time, the
// scenario for that flaw fails and no other does (and with no flaw, none does). Also its exit
// codes: 2 for a service that does not answer and for flags it cannot run with.
#include <QtTest>

#include "tests/conform/conform_run.h"
#include "tests/endpoint/serve_process.h"

using namespace Qt::StringLiterals;

namespace {

struct FlawedService {
  explicit FlawedService(const QStringList& flaws, const std::string& prefix = {},
                         const std::string& keyHeader = "Idempotency-Key", const std::vector<std::string>& more = {}) {
    std::vector<std::string> argv{"/usr/bin/python3", IDEM_SOURCE_DIR "/tests/conform/flawed_service.py", "--port", "0",
                                  "--ttl", "1", "--prefix", prefix, "--key-header", keyHeader};
    argv.insert(argv.end(), more.begin(), more.end());
    for (const auto& f : flaws) argv.insert(argv.end(), {"--flaw", f.toStdString()});
    process = std::make_unique<idem::test::ServeProcess>(idem::test::ServeProcess::Program{argv});
  }
  [[nodiscard]] QString url() const { return u"http://127.0.0.1:"_s + QString::number(process->port()); }
  std::unique_ptr<idem::test::ServeProcess> process;
};

// Every scenario can run against the flawed service: tenants, a delay header, a 1 s TTL.
const QStringList kEverything{u"--count-url"_s, u"/executions"_s,   u"--tenant-header"_s, u"X-Tenant-Id"_s,
                              u"--slow-header"_s, u"X-Delay-Ms: 600"_s, u"--ttl"_s,          u"1s"_s};

}  // namespace

class TestDetectsFlaws : public QObject {
  Q_OBJECT

 private slots:
  void eachFlawFailsItsScenarioAndNoOther_data() {
    QTest::addColumn<QStringList>("flaws");
    QTest::addColumn<QStringList>("failing");
    QTest::newRow("none") << QStringList() << QStringList();
    QTest::newRow("replay-status") << QStringList{u"replay-status"_s} << QStringList{u"replay"_s};
    QTest::newRow("replay-location") << QStringList{u"replay-location"_s} << QStringList{u"replay"_s};
    QTest::newRow("no-fingerprint") << QStringList{u"no-fingerprint"_s} << QStringList{u"payload-mismatch"_s};
    QTest::newRow("key-optional") << QStringList{u"key-optional"_s} << QStringList{u"key-missing"_s};
    QTest::newRow("lenient-keys") << QStringList{u"lenient-keys"_s} << QStringList{u"key-malformed"_s};
    QTest::newRow("no-lock") << QStringList{u"no-lock"_s} << QStringList{u"concurrent"_s};
    QTest::newRow("plain-errors") << QStringList{u"plain-errors"_s} << QStringList{u"problem-details"_s};
    QTest::newRow("global-keys") << QStringList{u"global-keys"_s} << QStringList{u"tenant-scope"_s};
    QTest::newRow("never-expire") << QStringList{u"never-expire"_s} << QStringList{u"expiry"_s};
    // No idempotency at all: everything a key should do fails (expiry cannot tell: it executes).
    QTest::newRow("ignore-keys") << QStringList{u"ignore-keys"_s}
                                 << QStringList{u"concurrent"_s,   u"key-malformed"_s,   u"key-missing"_s,
                                                u"payload-mismatch"_s, u"problem-details"_s, u"replay"_s,
                                                u"tenant-scope"_s};
  }
  void eachFlawFailsItsScenarioAndNoOther() {
    QFETCH(QStringList, flaws);
    QFETCH(QStringList, failing);
    FlawedService service(flaws);
    const auto run = idem::test::runConform(service.url(), kEverything);
    QVERIFY2(run.finished.exitedWith(failing.isEmpty() ? 0 : 1), run.describe());
    QVERIFY2(run.named(u"fail"_s) == failing, run.describe());
    QCOMPARE(run.named(u"skip"_s), QStringList());
    QCOMPARE(run.named(u"info"_s), QStringList{u"cross-key"_s});
  }

  void aFailureShowsItsEvidence() {
    FlawedService service({u"replay-location"_s});
    const auto f = idem::test::runProgram(idem::test::idemctlPath(),
                                          {u"conform"_s, service.url(), u"--count-url"_s, u"/executions"_s});
    QVERIFY2(f.exitedWith(1), f.describe());
    // The verdict line, what was expected, and both exchanges with the header that went missing.
    QVERIFY2(f.out.contains(u"FAIL  replay            headers: Location missing (was \"/v1/charges/ch_"_s), f.describe());
    QVERIFY2(f.out.contains(u"expected (§2.6 (duplicate request, retry))"_s), f.describe());
    QVERIFY2(f.out.contains(u"< 201  Content-Type: application/json  Idempotent-Replayed: true"_s), f.describe());
    QVERIFY2(f.out.contains(u"1 failed"_s), f.describe());
  }

  void crossKeyHoldsTheServiceToItsPromise() {
    FlawedService service({});
    // It executes the same body under a second key: right for off, wrong for reject and hold.
    auto off = idem::test::runConform(service.url(), {u"--only"_s, u"cross-key"_s, u"--expect-cross-key"_s, u"off"_s});
    QVERIFY2(off.finished.exitedWith(0), off.describe());
    QCOMPARE(off.named(u"pass"_s), QStringList{u"cross-key"_s});
    auto hold = idem::test::runConform(service.url(), {u"--only"_s, u"cross-key"_s, u"--expect-cross-key"_s, u"hold"_s});
    QVERIFY2(hold.finished.exitedWith(1), hold.describe());
    QVERIFY2(hold.scenario(u"cross-key"_s).value(u"reason").toString().startsWith(u"executed twice"_s), hold.describe());
  }

  void theUrlsPathIsPutBeforeEveryRoute() {
    FlawedService service({}, "/api");
    const auto run = idem::test::runConform(service.url() + u"/api/"_s, {u"--count-url"_s, u"/executions"_s, u"--only"_s,
                                                                         u"first-request,replay"_s});
    QVERIFY2(run.finished.exitedWith(0), run.describe());
    QCOMPARE(run.named(u"pass"_s), (QStringList{u"first-request"_s, u"replay"_s}));
    const auto first = run.scenario(u"replay"_s).value(u"exchanges").toArray().first().toObject();
    QCOMPARE(first.value(u"request").toObject().value(u"path").toString(), u"/api/v1/charges"_s);
    // Without the prefix the route is not there: the first request's 404 fails, and says what to check.
    const auto bare = idem::test::runConform(service.url(), {u"--count-url"_s, u"/api/executions"_s, u"--only"_s,
                                                             u"first-request"_s});
    QVERIFY2(bare.finished.exitedWith(1), bare.describe());
    QVERIFY2(bare.scenario(u"first-request"_s).value(u"reason").toString().contains(u"check --route"_s), bare.describe());
  }

  void theKeyGoesInTheHeaderTheServiceReads() {
    FlawedService service({}, {}, "X-Idempotency-Key");
    const QStringList some{u"--count-url"_s, u"/executions"_s, u"--only"_s, u"first-request,replay,key-malformed"_s};
    const auto named = idem::test::runConform(service.url(), some + QStringList{u"--key-header"_s, u"X-Idempotency-Key"_s});
    QVERIFY2(named.finished.exitedWith(0), named.describe());
    QCOMPARE(named.named(u"pass"_s).size(), 3);
    QVERIFY2(named.scenario(u"key-malformed"_s).value(u"reason").toString().contains(u"two X-Idempotency-Key fields"_s),
             named.describe());
    // Sent as Idempotency-Key, the service sees no key at all and refuses the first request.
    const auto unnamed = idem::test::runConform(service.url(), some);
    QVERIFY2(unnamed.finished.exitedWith(1), unnamed.describe());
    QVERIFY2(unnamed.named(u"fail"_s).contains(u"first-request"_s), unnamed.describe());
  }

  void httpsWithAServerThatClosesEachConnection() {
    // A certificate for 127.0.0.1 that the run trusts through OpenSSL's SSL_CERT_FILE.
    QTemporaryDir dir;
    const auto cert = dir.filePath(u"cert.pem"_s), key = dir.filePath(u"key.pem"_s);
    const auto made = idem::test::runProgram(
        u"openssl"_s, {u"req"_s, u"-x509"_s, u"-newkey"_s, u"rsa:2048"_s, u"-nodes"_s, u"-days"_s, u"1"_s, u"-subj"_s,
                       u"/CN=127.0.0.1"_s, u"-addext"_s, u"subjectAltName=IP:127.0.0.1"_s, u"-keyout"_s, key,
                       u"-out"_s, cert});
    QVERIFY2(made.exitedWith(0), made.describe());
    FlawedService service({}, {}, "Idempotency-Key", {"--tls", cert.toStdString(), key.toStdString(), "--close"});
    const auto url = u"https://127.0.0.1:"_s + QString::number(service.process->port());
    const QStringList some{u"--count-url"_s, u"/executions"_s, u"--only"_s, u"first-request,replay,key-missing"_s};
    auto trusting = QProcessEnvironment::systemEnvironment();
    trusting.insert(u"SSL_CERT_FILE"_s, cert);
    // Each answer ends its connection (the refusal resets it: the body was never read): the kit
    // reconnects, and OpenSSL's write on the dead one is no SIGPIPE (it ended the run, 141, no report).
    const auto run = idem::test::runConform(url, some, trusting);
    QVERIFY2(run.finished.exitedWith(0), run.describe());
    QCOMPARE(run.named(u"pass"_s), (QStringList{u"first-request"_s, u"key-missing"_s, u"replay"_s}));
    // Not trusted: no answer, and the message says why.
    const auto untrusted = idem::test::runConform(url, some);
    QVERIFY2(untrusted.finished.exitedWith(2), untrusted.describe());
    QVERIFY2(untrusted.finished.err.contains(u"certificate was not accepted"_s), untrusted.describe());
  }

  void aTooFastRouteSkipsTheRaceWithItsReason() {
    FlawedService service({u"no-lock"_s});
    const auto run = idem::test::runConform(service.url(), {u"--count-url"_s, u"/executions"_s, u"--only"_s,
                                                            u"concurrent"_s});
    QVERIFY2(run.finished.exitedWith(0), run.describe());
    QCOMPARE(run.named(u"skip"_s), QStringList{u"concurrent"_s});
    QVERIFY2(run.scenario(u"concurrent"_s).value(u"reason").toString().contains(u"--slow-header"_s), run.describe());
  }

  void usageAndConnectionErrorsExitTwo() {
    const auto nobody = idem::test::runProgram(idem::test::idemctlPath(), {u"conform"_s, u"http://127.0.0.1:9"_s});
    QVERIFY2(nobody.exitedWith(2), nobody.describe());
    QVERIFY2(nobody.err.contains(u"no answer from http://127.0.0.1:9: could not connect"_s), nobody.describe());
    QVERIFY2(nobody.out.isEmpty(), nobody.describe());
    for (const auto& [args, says] : std::vector<std::pair<QStringList, QString>>{
             {{u"conform"_s}, u"give the service's base URL"_s},
             // The race's requests go on connections of their own: no answer there is exit 2 too.
             {{u"conform"_s, u"http://127.0.0.1:9"_s, u"--only"_s, u"concurrent"_s}, u"could not connect"_s},
             {{u"conform"_s, u"ftp://x"_s}, u"is not an http:// or https:// URL"_s},
             {{u"conform"_s, u"http://127.0.0.1:9"_s, u"--route"_s, u"/v1/charges"_s}, u"--route: write a method"_s},
             {{u"conform"_s, u"http://127.0.0.1:9"_s, u"--only"_s, u"replays"_s}, u"no scenario is named \"replays\""_s},
             {{u"conform"_s, u"http://127.0.0.1:9"_s, u"--header"_s, u"NoColon"_s}, u"is not 'Name: value'"_s},
             {{u"conform"_s, u"http://127.0.0.1:9"_s, u"--ttl"_s, u"soon"_s}, u"--ttl: write"_s}}) {
      const auto f = idem::test::runProgram(idem::test::idemctlPath(), args);
      QVERIFY2(f.exitedWith(2), f.describe());
      QVERIFY2(f.err.contains(says), f.describe());
    }
  }
};

QTEST_GUILESS_MAIN(TestDetectsFlaws)
#include "tst_detectsflaws.moc"
