// The functions a migrated store holds are the functions the code calls: a function no
// statement calls any more (superseded by a later one, or by a plain statement) is dropped by a
// migration, not left installed with its grants. The calls are read from the sources (core/,
// app/, ui/), so a new call without its function, or a retired one left behind, fails here.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/testdb.h"

using namespace idem;

namespace {

// Kept installed for older binaries only, each with the reason and the migration that ends it.
// idem.complete_or_abort: binaries of schemas 13–15 complete through it during a rolling upgrade
// (0019 moved the completion into keysql.h).
const std::set<std::string> kForOlderBinaries{"complete_or_abort"};

std::filesystem::path repoRoot() { return IDEM_SOURCE_DIR; }

/// Every idem.<name>( in the sources.
std::set<std::string> calledFunctions() {
  // A call is written name( — a table's column list has a space: idem.events (tenant, …).
  static const std::regex call(R"(idem\.([a-z_][a-z0-9_]*)\()");
  std::set<std::string> out;
  for (const char* dir : {"core", "app", "ui"}) {
    const auto root = repoRoot() / dir;
    if (!std::filesystem::exists(root)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      const std::string s = text.str();
      for (std::sregex_iterator it(s.begin(), s.end(), call), end; it != end; ++it) out.insert((*it)[1].str());
    }
  }
  return out;
}

std::set<std::string> column(const pg::Result& r, const char* name) {
  std::set<std::string> out;
  for (int i = 0; i < r.rows(); ++i) out.insert(r.str(i, name));
  return out;
}

QString listed(const std::set<std::string>& names) {
  QStringList out;
  for (const auto& n : names) out << QString::fromStdString(n);
  return out.join(u", ");
}

}  // namespace

class TestSqlFunctions : public QObject {
  Q_OBJECT

 private slots:
  void installedAreCalled() {
    const auto called = calledFunctions();
    QVERIFY2(called.count("claim") == 1, "the scan found no call of idem.claim: it reads the wrong folder");
    test::TestDatabase db("sql_functions");
    auto c = db.connect();
    // Trigger functions are called by the triggers the schema installs, not by the code.
    const auto r = c.exec(
        "SELECT p.proname AS name, p.prorettype = 'trigger'::regtype AS trigger FROM pg_proc p "
        "WHERE p.pronamespace = 'idem'::regnamespace");
    std::set<std::string> installed, uncalled, missing;
    for (int i = 0; i < r.rows(); ++i) {
      const auto name = r.str(i, "name");
      installed.insert(name);
      if (!r.boolean(i, "trigger") && !called.count(name) && !kForOlderBinaries.count(name)) uncalled.insert(name);
    }
    for (const auto& name : called)
      if (!installed.count(name)) missing.insert(name);
    QVERIFY2(uncalled.empty(), qPrintable(QStringLiteral("installed but called by no code: ") + listed(uncalled)));
    QVERIFY2(missing.empty(), qPrintable(QStringLiteral("called but not installed: ") + listed(missing)));
    for (const auto& kept : kForOlderBinaries) QVERIFY2(installed.count(kept), kept.c_str());
    // Every installed function is pinned to the search_path and closed to PUBLIC (0015's rules).
    const auto loose = c.exec(
        "SELECT p.proname AS name FROM pg_proc p WHERE p.pronamespace = 'idem'::regnamespace "
        "AND (p.proconfig IS NULL OR NOT 'search_path=pg_catalog, idem, pg_temp' = ANY (p.proconfig) "
        "OR has_function_privilege('public', p.oid, 'EXECUTE'))");
    QVERIFY2(loose.rows() == 0, qPrintable(QStringLiteral("not pinned or open to PUBLIC: ") + listed(column(loose, "name"))));
  }
};

QTEST_GUILESS_MAIN(TestSqlFunctions)
#include "tst_sqlfunctions.moc"
