#pragma once
// Runs a program to completion and keeps what it printed: the CLI suites look at the programs
// as a user does, from the outside.
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace idem::test {

struct Finished {
  bool started = false;
  QProcess::ExitStatus status = QProcess::CrashExit;
  int code = -1;
  QString out;
  QString err;
  [[nodiscard]] bool exitedWith(int expected) const {
    return started && status == QProcess::NormalExit && code == expected;
  }
  [[nodiscard]] QByteArray describe() const {
    return (QStringLiteral("exit ") + QString::number(code) +
            (status == QProcess::CrashExit ? QStringLiteral(" (crashed)") : QString()) + QStringLiteral("\nstdout: ") +
            out + QStringLiteral("\nstderr: ") + err)
        .toUtf8();
  }
};

inline Finished runProgram(const QString& program, const QStringList& args,
                           const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  QProcess p;
  p.setProcessEnvironment(env);
  p.start(program, args);
  Finished f;
  f.started = p.waitForStarted(10'000);
  if (f.started && !p.waitForFinished(60'000)) p.kill(), p.waitForFinished();
  f.status = p.exitStatus();
  f.code = p.exitCode();
  f.out = QString::fromUtf8(p.readAllStandardOutput());
  f.err = QString::fromUtf8(p.readAllStandardError());
  return f;
}

inline QString idemctlPath() { return qEnvironmentVariable("IDEMCTL"); }

}  // namespace idem::test
