// proxy and serve read settings from a TOML file (--config or IDEM_CONFIG) and IDEM_* variables
// (issue 31, item 5): a flag beats its variable, which beats the file, which beats the default;
// every problem in a file is reported with its line and column. Seen from the outside: which
// policy path the command then fails to read says which source won.
#include <QtTest>

#include "tests/cli/cli_process.h"

using namespace Qt::StringLiterals;
using idem::test::runProgram;

class TestConfiguration : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;

  QString write(const QString& name, const QByteArray& text) {
    const QString path = m_dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(text);
    return path;
  }
  static QProcessEnvironment environment(const QStringList& set) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const QString& entry : set) env.insert(entry.section(u'=', 0, 0), entry.section(u'=', 1));
    return env;
  }
  // The policy path the command tried to read (from its "cannot read the policy file" error).
  static QString policyTried(const idem::test::Finished& f) {
    const auto m = QRegularExpression(u"idemctl \\w+: (\\S+): cannot read the policy file"_s).match(f.err);
    return m.hasMatch() ? m.captured(1) : QString();
  }

 private slots:
  void precedenceIsFlagThenEnvironmentThenFile_data() {
    QTest::addColumn<QString>("command");
    QTest::newRow("proxy") << u"proxy"_s;
    QTest::newRow("serve") << u"serve"_s;
  }
  void precedenceIsFlagThenEnvironmentThenFile() {
    QFETCH(QString, command);
    // serve takes no --upstream: a key that is not the command's flag is an error (tested below).
    const QByteArray upstream = command == u"proxy"_s ? "upstream = \"http://127.0.0.1:9\"\n" : "";
    const QString file = write(command + u".toml"_s, "# settings\n" + upstream + "policy = \"/from-file.json\"\n");
    const auto fromFile = runProgram(idem::test::idemctlPath(), {command, u"--config"_s, file});
    QVERIFY2(fromFile.exitedWith(2), fromFile.describe());
    QCOMPARE(policyTried(fromFile), u"/from-file.json"_s);

    const auto fromVariable = runProgram(idem::test::idemctlPath(), {command, u"--config"_s, file},
                                         environment({u"IDEM_POLICY=/from-env.json"_s}));
    QCOMPARE(policyTried(fromVariable), u"/from-env.json"_s);

    const auto fromFlag = runProgram(idem::test::idemctlPath(),
                                     {command, u"--config"_s, file, u"--policy"_s, u"/from-flag.json"_s},
                                     environment({u"IDEM_POLICY=/from-env.json"_s}));
    QCOMPARE(policyTried(fromFlag), u"/from-flag.json"_s);

    // The file named by IDEM_CONFIG instead of --config.
    const auto named = runProgram(idem::test::idemctlPath(), {command}, environment({u"IDEM_CONFIG="_s + file}));
    QCOMPARE(policyTried(named), u"/from-file.json"_s);
  }

  void everyProblemInTheFileIsReportedWithItsPlace() {
    const QString file = write(u"bad.toml"_s,
                               "upstream = \"http://127.0.0.1:9\"\n"
                               "upstreams = \"typo\"\n"
                               "replay-cache = 1.5\n"
                               "single-tenant = \"maybe\"\n");
    const auto f = runProgram(idem::test::idemctlPath(), {u"proxy"_s, u"--config"_s, file});
    QVERIFY2(f.exitedWith(2), f.describe());
    const QStringList lines = f.err.trimmed().split(u'\n');
    QCOMPARE(lines.size(), 3);
    QVERIFY2(lines[0].startsWith(u"idemctl proxy: "_s + file + u": line 2, column 1: \"upstreams\" is not a setting"_s),
             f.describe());
    QVERIFY2(lines[1].startsWith(file + u": line 3, column 16: replay-cache: must be a string"_s), f.describe());
    QVERIFY2(lines[2].startsWith(file + u": line 4, column 17: single-tenant: \"maybe\" is not a switch's value"_s),
             f.describe());
  }

  void notTomlIsRefusedWithItsPlace() {
    const QString file = write(u"broken.toml"_s, "policy = \"/p.json\"\nlisten = [\n");
    const auto f = runProgram(idem::test::idemctlPath(), {u"serve"_s, u"--config"_s, file});
    QVERIFY2(f.exitedWith(2), f.describe());
    QVERIFY2(f.err.startsWith(u"idemctl serve: "_s + file + u": line "_s), f.describe());
    QVERIFY2(f.err.contains(u"not a usable TOML file"_s), f.describe());
    const auto missing = runProgram(idem::test::idemctlPath(), {u"serve"_s, u"--config"_s, m_dir.filePath(u"none.toml"_s)});
    QVERIFY2(missing.exitedWith(2), missing.describe());
  }

  void aSwitchFromTheEnvironment() {
    // --single-tenant and --tenant-header together are refused; the variable sets the switch.
    const QString policy = write(u"policy.json"_s, "{\"docs_url\": \"/d\", \"tiers\": [{\"name\": \"a\", "
                                                  "\"routes\": [\"POST /a\"], \"ttl\": \"1h\"}]}");
    const QString file = write(u"tenant.toml"_s, "upstream = \"http://127.0.0.1:9\"\npolicy = \"" + policy.toUtf8() +
                                                     "\"\ntenant-header = \"X-Tenant-Id\"\n"
                                                     "db = \"host=/nonexistent-socket-dir port=1 connect_timeout=2\"\n");
    const auto on = runProgram(idem::test::idemctlPath(), {u"proxy"_s, u"--config"_s, file},
                               environment({u"IDEM_SINGLE_TENANT=1"_s}));
    QVERIFY2(on.exitedWith(2) && on.err.contains(u"single-tenant"_s), on.describe());
    // Off: the start goes on past the tenant source, to the store it cannot reach.
    const auto off = runProgram(idem::test::idemctlPath(), {u"proxy"_s, u"--config"_s, file},
                                environment({u"IDEM_SINGLE_TENANT=0"_s}));
    QVERIFY2(off.exitedWith(3), off.describe());
    const auto bad = runProgram(idem::test::idemctlPath(), {u"proxy"_s, u"--config"_s, file},
                                environment({u"IDEM_SINGLE_TENANT=perhaps"_s}));
    QVERIFY2(bad.exitedWith(2) && bad.err.contains(u"IDEM_SINGLE_TENANT=perhaps is not a switch's value"_s),
             bad.describe());
  }
};

QTEST_GUILESS_MAIN(TestConfiguration)
#include "tst_configuration.moc"
