#pragma once
// `idemctl conform` run as a user runs it, and its JSON report read back: the conform suites
// look at the kit from the outside.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QStringList>

#include "tests/cli/cli_process.h"

namespace idem::test {

struct ConformRun {
  Finished finished;
  QJsonObject report;  // empty unless --format json and stdout was JSON

  /// Scenario name -> verdict ("pass", "fail", "skip", "info").
  [[nodiscard]] QMap<QString, QString> verdicts() const {
    QMap<QString, QString> out;
    for (const auto& s : report.value(u"scenarios").toArray())
      out.insert(s.toObject().value(u"name").toString(), s.toObject().value(u"verdict").toString());
    return out;
  }
  [[nodiscard]] QStringList named(const QString& verdict) const {
    QStringList out;
    const auto all = verdicts();
    for (auto it = all.begin(); it != all.end(); ++it)
      if (it.value() == verdict) out << it.key();
    return out;
  }
  [[nodiscard]] QJsonObject scenario(const QString& name) const {
    for (const auto& s : report.value(u"scenarios").toArray())
      if (s.toObject().value(u"name").toString() == name) return s.toObject();
    return {};
  }
  /// Every scenario's verdict and reason, for a failed check's message.
  [[nodiscard]] QByteArray describe() const {
    // The report is read back below; the raw output only when there is none.
    QByteArray out = report.isEmpty() ? finished.describe().left(4000)
                                      : "exit " + QByteArray::number(finished.code) + "\nstderr: " + finished.err.toUtf8();
    for (const auto& s : report.value(u"scenarios").toArray())
      out += "\n  " + s.toObject().value(u"verdict").toString().toUtf8() + " " +
             s.toObject().value(u"name").toString().toUtf8() + ": " + s.toObject().value(u"reason").toString().toUtf8();
    return out;
  }
};

/// idemctl conform URL ARGS... --format json
inline ConformRun runConform(const QString& url, QStringList args,
                             const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  args.prepend(url);
  args.prepend(QStringLiteral("conform"));
  args << QStringLiteral("--format") << QStringLiteral("json");
  ConformRun run;
  run.finished = runProgram(idemctlPath(), args, env);
  run.report = QJsonDocument::fromJson(run.finished.out.toUtf8()).object();
  return run;
}

}  // namespace idem::test
