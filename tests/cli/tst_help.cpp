// idemctl --version and --help as a user reads them: the version names the schema the build
// needs, and every flag each command's parser accepts is described with its default. The list
// of flags is the parser's own (its answer to an unknown option), never a copy kept here.
#include <QRegularExpression>
#include <QtTest>

#include "core/store/migrations.h"
#include "tests/cli/cli_process.h"

using namespace Qt::StringLiterals;

namespace {

// The commands `idemctl --help` lists: the indented words under "Commands:".
QStringList commandsListed() {
  const auto f = idem::test::runProgram(idem::test::idemctlPath(), {u"--help"_s});
  if (!f.exitedWith(0)) return {};
  QStringList names;
  const auto block = f.out.section(u"Commands:\n"_s, 1).section(u"\n\n"_s, 0, 0);
  for (const auto& line : block.split(u'\n', Qt::SkipEmptyParts)) names << line.trimmed().section(u' ', 0, 0);
  return names;
}

// The flags a command's parser accepts, from its refusal of one it does not: "it takes --a, --b and --c".
QStringList flagsAccepted(const QString& command, QByteArray& why) {
  const auto f = idem::test::runProgram(idem::test::idemctlPath(), {command, u"--no-such-flag-for-the-test"_s});
  why = f.describe();
  if (!f.exitedWith(2)) return {};
  const auto m = QRegularExpression(u"unknown option --no-such-flag-for-the-test; it takes (.*) \\("_s).match(f.err);
  if (!m.hasMatch()) return {};
  QStringList flags;
  for (const auto& word : m.captured(1).split(QRegularExpression(u",? and |, "_s))) flags << word.trimmed();
  return flags;
}

}  // namespace

class TestHelp : public QObject {
  Q_OBJECT

 private slots:
  void versionNamesTheProjectAndTheSchemaItNeeds() {
    for (const auto& args : {QStringList{u"--version"_s}, QStringList{u"migrate"_s, u"--version"_s}}) {
      const auto f = idem::test::runProgram(idem::test::idemctlPath(), args);
      QVERIFY2(f.exitedWith(0), f.describe());
      QCOMPARE(f.out, u"idemctl "_s + QStringLiteral(IDEM_VERSION) + u" (schema "_s +
                          QString::number(idem::store::expectedSchemaVersion()) + u")\n"_s);
    }
  }

  void theOperatorsCommandsAreListed() {
    const auto listed = commandsListed();
    for (const auto& needed : {u"proxy"_s, u"serve"_s, u"migrate"_s, u"sweep"_s, u"explain"_s, u"tiers"_s})
      QVERIFY2(listed.contains(needed), qPrintable(listed.join(u' ')));
  }

  void everyFlagTheParserAcceptsIsDescribedWithItsDefault_data() {
    QTest::addColumn<QString>("command");
    for (const auto& c : commandsListed()) QTest::newRow(qPrintable(c)) << c;
  }
  void everyFlagTheParserAcceptsIsDescribedWithItsDefault() {
    QFETCH(QString, command);
    QByteArray why;
    const auto flags = flagsAccepted(command, why);
    QVERIFY2(!flags.isEmpty(), why);
    const auto help = idem::test::runProgram(idem::test::idemctlPath(), {command, u"--help"_s});
    QVERIFY2(help.exitedWith(0), help.describe());
    QVERIFY2(help.out.startsWith(u"Usage: idemctl "_s + command), qPrintable(help.out));
    const auto lines = help.out.split(u'\n');
    for (const auto& flag : flags) {
      QVERIFY2(flag.startsWith(u"--"_s), qPrintable(flag));
      // "  --name [VALUE]" then an indented description ending in its default (or "(required...)").
      const auto at = lines.indexOf(QRegularExpression(u"^  "_s + QRegularExpression::escape(flag) + u"( .*)?$"_s));
      QVERIFY2(at >= 0 && at + 1 < lines.size(), qPrintable(command + u": "_s + flag + u" is not in --help"_s));
      const auto text = lines[at + 1];
      QVERIFY2(QRegularExpression(u"^      \\S.{8,} \\((default: \\S.*|required[^)]*)\\)$"_s).match(text).hasMatch(),
               qPrintable(command + u" "_s + flag + u": \""_s + text + u"\""_s));
    }
  }

  void anUnknownCommandIsRefusedAndNamesTheHelp() {
    const auto f = idem::test::runProgram(idem::test::idemctlPath(), {u"proxies"_s});
    QVERIFY2(f.exitedWith(2), f.describe());
    QVERIFY2(f.err.contains(u"idemctl --help"_s), f.describe());
  }
};

QTEST_GUILESS_MAIN(TestHelp)
#include "tst_help.moc"
