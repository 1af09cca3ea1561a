// idem-console --help and --version on a machine without a display (a server, an SSH session,
// help2man at build time): answered without loading a Qt platform plugin, which would abort.
#include <QtTest>

#include "core/store/migrations.h"
#include "tests/cli/cli_process.h"

using namespace Qt::StringLiterals;

namespace {

QProcessEnvironment withoutDisplay() {
  auto env = QProcessEnvironment::systemEnvironment();
  for (const auto& name : {u"DISPLAY"_s, u"WAYLAND_DISPLAY"_s, u"QT_QPA_PLATFORM"_s}) env.remove(name);
  return env;
}

}  // namespace

class TestConsole : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    if (qEnvironmentVariableIsEmpty("IDEM_CONSOLE")) QSKIP("built without the console (IDEM_BUILD_UI=OFF)");
  }

  void versionWithoutADisplay() {
    const auto f = idem::test::runProgram(qEnvironmentVariable("IDEM_CONSOLE"), {u"--version"_s}, withoutDisplay());
    QVERIFY2(f.exitedWith(0), f.describe());
    QCOMPARE(f.out, u"idem-console "_s + QStringLiteral(IDEM_VERSION) + u" (schema "_s +
                        QString::number(idem::store::expectedSchemaVersion()) + u")\n"_s);
  }

  void helpWithoutADisplay() {
    const auto f = idem::test::runProgram(qEnvironmentVariable("IDEM_CONSOLE"), {u"--help"_s}, withoutDisplay());
    QVERIFY2(f.exitedWith(0), f.describe());
    QVERIFY2(f.out.startsWith(u"Usage: idem-console [options]\n"_s), f.describe());
    for (const auto& option : {u"--db <CONNINFO>"_s, u"--demo"_s, u"--settings <FILE>"_s, u"--version"_s})
      QVERIFY2(f.out.contains(option), f.describe());
  }
};

QTEST_GUILESS_MAIN(TestConsole)
#include "tst_console.moc"
