// The systemd units as systemd reads them: `systemd-analyze verify` on each (an instance of the
// proxy's template included) finds nothing, and `systemd-analyze security --offline` rates
// each service's exposure at most 2.0 (--threshold=20: its scale runs to 100). The units name
// this build's idemctl instead of the installed one (verify checks that ExecStart's program exists); ./run package
// --install-test checks the installed files the same way.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/cli/cli_process.h"

using namespace Qt::StringLiterals;

namespace {

const QString kSystemdAnalyze = u"/usr/bin/systemd-analyze"_s;

// resources/systemd/NAME(.in) with the placeholders CMake fills at configure time filled.
bool writeUnit(const QDir& to, const QString& name) {
  const QString source = QStringLiteral(IDEM_SOURCE_DIR "/resources/systemd/");
  QFile in(QFile::exists(source + name + u".in"_s) ? source + name + u".in"_s : source + name);
  if (!in.open(QIODevice::ReadOnly)) return false;
  QString text = QString::fromUtf8(in.readAll());
  text.replace(u"@IDEM_BINDIR@"_s, QFileInfo(idem::test::idemctlPath()).absolutePath());
  text.replace(u"@IDEM_DOCDIR@"_s, u"/usr/share/doc/idem"_s);
  QFile hardening(source + u"hardening.conf"_s);
  if (!hardening.open(QIODevice::ReadOnly)) return false;
  text.replace(u"@IDEM_HARDENING@"_s, QString::fromUtf8(hardening.readAll()));
  QFile out(to.filePath(name));
  return out.open(QIODevice::WriteOnly) && out.write(text.toUtf8()) > 0;
}

}  // namespace

class TestUnits : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;

 private slots:
  void initTestCase() {
    QVERIFY2(QFile::exists(kSystemdAnalyze), "systemd-analyze is missing: ./run installs Debian's systemd package");
    QVERIFY(m_dir.isValid());
    for (const auto& name : {u"idem-proxy@.service"_s, u"idem-sweep.service"_s, u"idem-sweep.timer"_s})
      QVERIFY2(writeUnit(QDir(m_dir.path()), name), qPrintable(name));
  }

  void verifyFindsNothing() {
    QProcess p;
    p.setWorkingDirectory(m_dir.path());
    p.start(kSystemdAnalyze,
            {u"verify"_s, u"--man=no"_s, u"idem-proxy@main.service"_s, u"idem-sweep.service"_s, u"idem-sweep.timer"_s});
    QVERIFY(p.waitForFinished(60'000));
    const QString said = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
    // An unknown key or a bad value is only a warning (exit 0): anything said is a finding.
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(said));
    QVERIFY2(said.trimmed().isEmpty(), qPrintable(said));
  }

  void verifyWouldSeeAMistake() {
    // The check above can fail: the same verify on a unit with a misspelt key speaks up.
    QFile unit(QDir(m_dir.path()).filePath(u"idem-sweep.service"_s));
    QVERIFY(unit.open(QIODevice::Append));
    unit.write("ProtectHomes=yes\n");
    unit.close();
    QProcess p;
    p.setWorkingDirectory(m_dir.path());
    p.start(kSystemdAnalyze, {u"verify"_s, u"--man=no"_s, u"idem-sweep.service"_s});
    QVERIFY(p.waitForFinished(60'000));
    QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains(u"ProtectHomes"_s));
    QVERIFY(writeUnit(QDir(m_dir.path()), u"idem-sweep.service"_s));
  }

  void exposureIsLow_data() {
    QTest::addColumn<QString>("unit");
    QTest::newRow("proxy") << u"idem-proxy@.service"_s;
    QTest::newRow("sweep") << u"idem-sweep.service"_s;
  }
  void exposureIsLow() {
    QFETCH(QString, unit);
    const auto f = idem::test::runProgram(kSystemdAnalyze, {u"security"_s, u"--offline=true"_s, u"--threshold=20"_s,
                                                            u"--no-pager"_s, QDir(m_dir.path()).filePath(unit)});
    QVERIFY2(f.exitedWith(0), f.describe());
    QVERIFY2(f.out.contains(u"Overall exposure level"_s), f.describe());
  }

  void theServicesRunAsIdemWithNoNewPrivileges() {
    for (const auto& name : {u"idem-proxy@.service"_s, u"idem-sweep.service"_s}) {
      QFile unit(QDir(m_dir.path()).filePath(name));
      QVERIFY(unit.open(QIODevice::ReadOnly));
      const auto lines = QString::fromUtf8(unit.readAll()).split(u'\n');
      for (const auto& setting : {u"User=idem"_s, u"NoNewPrivileges=yes"_s, u"ProtectSystem=strict"_s,
                                  u"ProtectHome=yes"_s, u"PrivateTmp=yes"_s})
        QVERIFY2(lines.contains(setting), qPrintable(name + u": no "_s + setting));
    }
  }
};

QTEST_GUILESS_MAIN(TestUnits)
#include "tst_units.moc"
