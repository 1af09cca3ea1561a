// The trace's vocabulary lives in core/trace/outcome.h and, again, in the database: the CHECK
// on idem.events.outcome and the partial index of executions. These tests read both back from
// pg_catalog on a migrated database and hold them to the type, so that an outcome added on one
// side only fails here, not in production (a refused trace row is dropped).
#include <QtTest>
#include <regex>
#include <set>

#include "core/trace/outcome.h"
#include "tests/support/testdb.h"

using namespace idem;

namespace {

// The quoted names of a constraint or index expression as pg_catalog prints it:
// "CHECK ((outcome = ANY (ARRAY['executed'::text, ...])))".
std::set<std::string> quotedNames(const std::string& text) {
  static const std::regex literal("'([^']*)'::text");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), literal); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1].str());
  return out;
}

std::set<std::string> names(bool (*which)(trace::Outcome)) {
  std::set<std::string> out;
  for (const auto& f : trace::kOutcomes)
    if (which(f.outcome)) out.emplace(f.sql);
  return out;
}

bool any(trace::Outcome) { return true; }

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& n : s) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

class TestOutcomes : public QObject {
  Q_OBJECT

 private slots:
  void theTypeIsConsistent() {
    std::set<std::string> sql, labels;
    for (const auto& f : trace::kOutcomes) {
      QVERIFY(!f.sql.empty());
      QVERIFY(!f.label.empty());
      sql.emplace(f.sql);
      labels.emplace(f.label);
      QCOMPARE(trace::parseOutcome(f.sql), std::optional<trace::Outcome>(f.outcome));
      QCOMPARE(trace::sqlName(f.outcome), f.sql);
    }
    QCOMPARE(sql.size(), trace::kOutcomeCount);     // no name twice
    QCOMPARE(labels.size(), trace::kOutcomeCount);  // people can tell every outcome apart
    QVERIFY(!trace::parseOutcome("waited"));        // never written, gone (migration 0017)
    QVERIFY(!trace::parseOutcome(""));
    QCOMPARE(trace::sqlLiterals(trace::isExecution), std::string("'executed', 'executed_after_expiry', 'lease_takeover', 'outcome_unknown'"));
  }

  void theCheckConstraintListsExactlyTheType() {
    test::TestDatabase db("outcomes_check");
    auto c = db.connect();
    auto r = c.exec(
        "SELECT pg_get_constraintdef(k.oid) AS def FROM pg_constraint k "
        "WHERE k.conrelid = 'idem.events'::regclass AND k.contype = 'c' "
        "AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = k.conrelid AND a.attnum = ANY (k.conkey) "
        "AND a.attname = 'outcome')");
    QCOMPARE(r.rows(), 1);  // one list, not two to keep in step
    const auto inDatabase = quotedNames(r.str(0, "def"));
    const auto inType = names(any);
    QVERIFY2(inDatabase == inType,
             ("database: " + joined(inDatabase) + "\ntype:     " + joined(inType)).c_str());
  }

  void thePartialIndexOfExecutionsListsTheTypesExecutions() {
    // The console's "executed more than once" filter names the executions in its text
    // (trace::sqlLiterals) so that the planner can use this index.
    test::TestDatabase db("outcomes_index");
    auto c = db.connect();
    auto r = c.exec("SELECT pg_get_expr(i.indpred, i.indrelid) AS pred FROM pg_index i "
                    "WHERE i.indexrelid = 'idem.events_executions'::regclass");
    QCOMPARE(r.rows(), 1);
    const auto inIndex = quotedNames(r.str(0, "pred"));
    const auto inType = names(trace::isExecution);
    QVERIFY2(inIndex == inType, ("index: " + joined(inIndex) + "\ntype:  " + joined(inType)).c_str());
  }

  void everyOutcomeIsStorable() {
    test::TestDatabase db("outcomes_store");
    auto c = db.connect();
    for (const auto& f : trace::kOutcomes)
      c.exec("INSERT INTO idem.events (tenant, endpoint, idem_key, outcome) VALUES ('t', 'POST /x', 'k', $1)",
             {std::string(f.sql)});
    QCOMPARE(c.exec("SELECT count(DISTINCT outcome) AS n FROM idem.events").integer(0, "n"),
             static_cast<long long>(trace::kOutcomeCount));
    // And a name outside the type is refused, so a misspelt writer cannot slip one in.
    QVERIFY_THROWS_EXCEPTION(pg::QueryError, c.exec("INSERT INTO idem.events (tenant, endpoint, idem_key, outcome) "
                                                     "VALUES ('t', 'POST /x', 'k', 'waited')"));
  }
};

QTEST_APPLESS_MAIN(TestOutcomes)
#include "tst_outcomes.moc"
