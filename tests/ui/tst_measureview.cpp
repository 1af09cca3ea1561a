// The simulator's Measure tab (issue 20) on the offscreen platform over real PostgreSQL: attempts
// written with the endpoint's own insert (core/faultrig/faultlog.h) show per client and fault
// exactly as core/measure computes them for the same rows and as `idemctl measure --format json`
// prints them; "Use as policy A/B" puts the fitted policy into the editors; the since filter, the
// empty state and a store without idem_demo.fault_attempts each say what they are; the GUI
// thread keeps running while the reading waits on a lock the test holds; attempts the real
// endpoint recorded (idemctl serve --allow-fault-injection over loopback) show as idemctl measures them.
#include <QAbstractItemModelTester>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QtTest>
#include <chrono>
#include <nlohmann/json.hpp>

#include "core/client/client.h"
#include "core/faultrig/faultlog.h"
#include "core/measure/recorded.h"
#include "core/sim/config_parse.h"
#include "core/sim/policytext.h"
#include "tests/endpoint/serve_process.h"
#include "tests/ui/uifixtures.h"
#include "ui/sim/measuremodel.h"
#include "ui/sim/measurepanel.h"
#include "ui/sim/policyeditor.h"
#include "ui/sim/simulatorworkspace.h"

using namespace idem;
using namespace idem::ui::sim;
using namespace Qt::StringLiterals;
using State = MeasurePanel::State;

namespace {

long long nowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Attempts as the endpoint records them. Sleeps (seconds, after each answer) per retry; op i's
// jitter shifts every sleep by i ms so the spreads have distinct min, p50 and max.
struct Schedule {
  std::string agent;
  std::string profile;
  int operations = 0;
  std::vector<double> sleeps;
  double attemptLength = 0.002;  // answer time; a hang's is the client's timeout
  bool rotateKey = false;
};

std::vector<faultrig::FaultAttempt> attemptsOf(const Schedule& s, long long baseUs) {
  std::vector<faultrig::FaultAttempt> out;
  for (int op = 0; op < s.operations; ++op) {
    long long at = baseUs + op * 60'000'000LL;
    for (std::size_t n = 0; n <= s.sleeps.size(); ++n) {
      faultrig::FaultAttempt a;
      a.arrivedUs = at;
      a.endedUs = at + static_cast<long long>(s.attemptLength * 1e6);
      a.profile = s.profile;
      a.operation = s.agent + "-" + s.profile + "-" + std::to_string(op);
      a.key = "key-" + std::to_string(op) + (s.rotateKey ? "-" + std::to_string(n) : "");
      a.userAgent = s.agent;
      a.method = "POST";
      a.path = "/v1/payments";
      a.outcome = s.profile == "hang" ? "hang" : s.profile.substr(0, 3);
      if (s.profile.find("retry-after-") != std::string::npos)
        a.retryAfter = s.profile.substr(s.profile.rfind('-') + 1);
      out.push_back(a);
      if (n < s.sleeps.size()) at = a.endedUs + static_cast<long long>((s.sleeps[n] + op * 0.001) * 1e6);
    }
  }
  return out;
}

measure::Attempt asMeasured(const faultrig::FaultAttempt& a) {
  return {a.arrivedUs, a.endedUs, a.profile, a.operation, a.key, a.userAgent, a.retryAfter};
}

// Three clients: an exponential one measured on 500, on 503 with Retry-After 2 s and on a hang;
// one that changes its key; one recorded three hours ago that never retries a 409.
std::vector<measure::Attempt> seed(pg::Connection& conn) {
  const long long recent = nowUs() - 20LL * 60 * 1'000'000;
  const long long old = nowUs() - 3LL * 3600 * 1'000'000;
  const std::vector<std::pair<Schedule, long long>> schedules{
      {{"backoff-client/1.0", "500", 7, {0.5, 1.0, 2.0}}, recent},
      {{"backoff-client/1.0", "503-retry-after-2", 5, {2.0, 2.0, 2.0}}, recent},
      {{"backoff-client/1.0", "hang", 3, {0.5, 1.0, 2.0}, 3.0}, recent},
      {{"key-rotator/2", "500", 4, {1.0}, 0.002, true}, recent},
      {{"old-client/0.1", "409", 6, {}}, old},
  };
  std::vector<measure::Attempt> all;
  for (const auto& [schedule, base] : schedules)
    for (const auto& a : attemptsOf(schedule, base)) {
      faultrig::insertFaultAttempt(conn, a);
      all.push_back(asMeasured(a));
    }
  return all;
}

bool loaded(MeasurePanel* panel, QSignalSpy& spy, int timeoutMs = 60000) {
  QElapsedTimer t;
  t.start();
  while (spy.isEmpty() && t.elapsed() < timeoutMs) QTest::qWait(20);
  return !spy.isEmpty() && panel->state() != State::Loading;
}

// Opens session on conninfo, hands it to a shown panel and waits for the first answer.
bool showOn(const std::string& conninfo, ui::DbSession& session, MeasurePanel& panel) {
  if (!test::openSession(session, conninfo)) return false;
  QSignalSpy spy(&panel, &MeasurePanel::loaded);
  panel.setSession(&session);
  panel.show();
  return loaded(&panel, spy);
}

nlohmann::json plain(const nlohmann::ordered_json& j) { return nlohmann::json::parse(j.dump()); }

}  // namespace

class TestMeasureView : public QObject {
  Q_OBJECT

 private slots:
  void figuresAreCoresAndIdemctlsAndLoadAsPolicies() {
    test::TestDatabase db("ui_measure_figures");
    auto conn = db.connect();
    const auto seeded = seed(conn);
    ui::DbSession session(u"measure"_s);
    QVERIFY(test::openSession(session, db.conninfo()));

    SimulatorWorkspace ws;
    ws.resize(1500, 900);
    ws.setSession(&session);
    MeasurePanel* panel = ws.measurePanel();
    QAbstractItemModelTester tester(panel->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy spy(panel, &MeasurePanel::loaded);
    ws.show();
    ws.setCurrentTab(SimulatorWorkspace::MeasureTab);  // the first showing reads
    QVERIFY(loaded(panel, spy));
    QCOMPARE(panel->state(), State::Shown);

    // The same figures as core/measure for the rows written, and as idemctl measure prints.
    const auto expected = measure::analyze(seeded);
    const auto& shown = panel->model()->reports();
    QCOMPARE(plain(measure::toJson(shown)), plain(measure::toJson(expected)));
    std::string out;
    QCOMPARE(test::runIdemctl({"measure", "--db", db.conninfo(), "--format", "json"}, &out), 0);
    QCOMPARE(nlohmann::json::parse(out), plain(measure::toJson(shown)));

    // The table: one row per client and fault, three retry columns, core's numbers in the cells.
    MeasureModel* model = panel->model();
    QCOMPARE(model->rowCount(), 5);
    QCOMPARE(model->retryColumns(), 3);
    QCOMPARE(shown[0].userAgent, std::string("backoff-client/1.0"));
    const auto& f500 = shown[0].faults[0];
    QCOMPARE(f500.profile, std::string("500"));
    QCOMPARE(model->index(0, MeasureModel::ClientColumn).data().toString(), u"backoff-client/1.0"_s);
    QCOMPARE(model->index(1, MeasureModel::ClientColumn).data().toString(), QString());  // same client
    QCOMPARE(model->index(0, MeasureModel::OperationsColumn).data().toInt(), 7);
    QCOMPARE(model->index(0, MeasureModel::AttemptsColumn).data().toString(), u"4"_s);
    QCOMPARE(model->index(0, MeasureModel::KeyColumn).data().toString(), u"kept"_s);
    for (int n = 0; n < 3; ++n) {
      const QModelIndex cell = model->index(0, MeasureModel::FirstRetryColumn + n);
      const auto& gap = f500.retries[static_cast<std::size_t>(n)].gap;
      QCOMPARE(cell.data(MeasureModel::ValueRole).toList(), (QVariantList{gap.min, gap.p50, gap.max}));
      QCOMPARE(cell.data().toString(), MeasureModel::spreadText(gap));
      QVERIFY(gap.min < gap.max);  // jittered by the seed: the three figures differ
    }
    // Retry 2's gap: 1 s sleep after a 2 ms answer plus the op's 0-6 ms.
    QCOMPARE(model->index(0, MeasureModel::FirstRetryColumn + 1).data().toString(), u"1.002 / 1.005 / 1.008"_s);
    QCOMPARE(model->index(1, MeasureModel::FaultColumn).data().toString(), u"503-retry-after-2"_s);
    QCOMPARE(model->index(1, MeasureModel::RetryAfterColumn).data().toString(), u"2.000 s honoured"_s);
    QCOMPARE(model->index(1, MeasureModel::RetryAfterColumn).data(MeasureModel::ValueRole), QVariant(true));
    QCOMPARE(model->index(2, MeasureModel::FaultColumn).data().toString(), u"hang"_s);
    QCOMPARE(model->index(2, MeasureModel::TimeoutColumn).data().toString(), u"3.000"_s);
    QCOMPARE(model->index(2, MeasureModel::TimeoutColumn).data(MeasureModel::ValueRole).toList(),
             (QVariantList{3.0, 3.0, 3.0}));
    QCOMPARE(model->index(3, MeasureModel::ClientColumn).data().toString(), u"key-rotator/2"_s);
    QCOMPARE(model->index(3, MeasureModel::KeyColumn).data().toString(), u"CHANGED"_s);
    QCOMPARE(model->index(3, MeasureModel::KeyColumn).data(MeasureModel::ValueRole), QVariant(false));
    QCOMPARE(model->index(4, MeasureModel::ClientColumn).data().toString(), u"old-client/0.1"_s);
    QCOMPARE(model->index(4, MeasureModel::AttemptsColumn).data().toString(), u"1"_s);

    // The first client is chosen; its fitted policy in core's words.
    QCOMPARE(panel->currentClient(), 0);
    QCOMPARE(panel->policyLabel()->text(), QString::fromStdString(sim::describePolicy(shown[0].fitted)));
    QVERIFY2(panel->policyLabel()->text().contains(u"exponential"_s), qPrintable(panel->policyLabel()->text()));

    // Use as policy A: the editor holds the fitted policy, field for field.
    QTest::mouseClick(panel->useAButton(), Qt::LeftButton);
    QCOMPARE(plain(sim::policyToJson(ws.policyEditor(0)->policy())), plain(sim::policyToJson(shown[0].fitted)));
    const sim::Policy a = ws.policyEditor(0)->policy();
    QCOMPARE(a.maxAttempts, shown[0].fitted.maxAttempts);
    QCOMPARE(a.backoff, sim::Backoff::Exponential);
    QCOMPARE(a.base, shown[0].fitted.base);
    QCOMPARE(a.timeout, shown[0].fitted.timeout);
    QCOMPARE(a.retryAfter, sim::RetryAfterMode::Max);
    QCOMPARE(ws.policyEditor(0)->title(), u"Measured backoff-client/1.0"_s);

    // Choosing the key rotator's row and "Use as policy B" loads its policy, A stays.
    QTest::mouseClick(panel->table()->viewport(), Qt::LeftButton, {},
                      panel->table()->visualRect(model->index(3, MeasureModel::FaultColumn)).center());
    QCOMPARE(panel->currentClient(), 1);
    QTest::mouseClick(panel->useBButton(), Qt::LeftButton);
    QCOMPARE(plain(sim::policyToJson(ws.policyEditor(1)->policy())), plain(sim::policyToJson(shown[1].fitted)));
    QCOMPARE(plain(sim::policyToJson(ws.policyEditor(0)->policy())), plain(sim::policyToJson(shown[0].fitted)));

    // Since 1h: the client recorded three hours ago is gone, the chosen client stays chosen.
    spy.clear();
    panel->sinceEdit()->setText(u"1h"_s);
    QTest::keyClick(panel->sinceEdit(), Qt::Key_Return);
    QVERIFY(loaded(panel, spy));
    QCOMPARE(panel->state(), State::Shown);
    QCOMPARE(model->reports().size(), std::size_t{2});
    QCOMPARE(model->rowCount(), 4);
    QCOMPARE(panel->currentClient(), 1);
    QCOMPARE(QString::fromStdString(model->reports()[1].userAgent), u"key-rotator/2"_s);
    QVERIFY(panel->statusLabel()->text().contains(u"since 1h"_s));

    // A since that is neither a duration nor a timestamp: said so, the figures stay.
    spy.clear();
    panel->sinceEdit()->setText(u"yesterday-ish"_s);
    QTest::mouseClick(panel->refreshButton(), Qt::LeftButton);
    QVERIFY(loaded(panel, spy));
    QCOMPARE(panel->state(), State::BadSince);
    QVERIFY2(panel->statusLabel()->text().contains(u"neither a duration"_s), qPrintable(panel->statusLabel()->text()));
    QCOMPARE(model->rowCount(), 4);

    // A timestamp after every attempt: the empty state names the window.
    spy.clear();
    panel->sinceEdit()->setText(u"2999-01-01 00:00Z"_s);
    QTest::mouseClick(panel->refreshButton(), Qt::LeftButton);
    QVERIFY(loaded(panel, spy));
    QCOMPARE(panel->state(), State::Empty);
    QVERIFY(panel->messageLabel()->isVisible());
    QVERIFY(!panel->table()->isVisible());
    QVERIFY(!panel->useAButton()->isEnabled());
    QVERIFY2(panel->messageLabel()->text().contains(u"No measured attempts since 2999-01-01 00:00Z"_s),
             qPrintable(panel->messageLabel()->text()));
  }

  // The real endpoint records the attempts (idemctl serve --allow-fault-injection, driven over
  // loopback): the view shows what idemctl measure prints for them.
  void attemptsRecordedByTheEndpointShowAsIdemctlMeasuresThem() {
    test::TestDatabase db("ui_measure_serve");
    {
      test::ServeProcess serve({"--db", db.conninfo(), "--allow-fault-injection"});
      client::Client client("127.0.0.1", serve.port());
      for (int op = 0; op < 3; ++op)
        for (int attempt = 0; attempt < 3; ++attempt) {
          const auto r = client.post("/faults/503-retry-after-1/op-view-" + std::to_string(op) + "/v1/payments",
                                     {{"Content-Type", "application/json"},
                                      {"Idempotency-Key", "view-key-" + std::to_string(op)},
                                      {"User-Agent", "measure-view-test/1"}},
                                     "{}");
          QCOMPARE(r.status, 503);
        }
      // Written off the endpoint's event loop: wait for the nine rows.
      auto conn = db.connect();
      QTRY_COMPARE_WITH_TIMEOUT(conn.exec("SELECT count(*) AS n FROM idem_demo.fault_attempts").integer(0, "n"), 9LL,
                                15000);
    }
    ui::DbSession session(u"measure"_s);
    MeasurePanel panel;
    QVERIFY(showOn(db.conninfo(), session, panel));
    QCOMPARE(panel.state(), State::Shown);
    std::string out;
    QCOMPARE(test::runIdemctl({"measure", "--db", db.conninfo(), "--format", "json"}, &out), 0);
    QCOMPARE(nlohmann::json::parse(out), plain(measure::toJson(panel.model()->reports())));
    auto conn = db.connect();
    QCOMPARE(plain(measure::toJson(panel.model()->reports())),
             plain(measure::toJson(measure::analyze(measure::readRecordedAttempts(conn, 0)))));
    const MeasureModel* model = panel.model();
    QCOMPARE(model->rowCount(), 1);
    QCOMPARE(model->index(0, MeasureModel::ClientColumn).data().toString(), u"measure-view-test/1"_s);
    QCOMPARE(model->index(0, MeasureModel::OperationsColumn).data().toInt(), 3);
    QCOMPARE(model->index(0, MeasureModel::AttemptsColumn).data().toString(), u"3"_s);
    QCOMPARE(model->index(0, MeasureModel::KeyColumn).data().toString(), u"kept"_s);
    QCOMPARE(model->retryColumns(), 2);
    QVERIFY(panel.useAButton()->isEnabled());
  }

  void emptyStoreSaysHowToMeasure() {
    test::TestDatabase db("ui_measure_empty");
    ui::DbSession session(u"measure"_s);
    MeasurePanel panel;
    QVERIFY(showOn(db.conninfo(), session, panel));
    QCOMPARE(panel.state(), State::Empty);
    const QString text = panel.messageLabel()->text();
    QVERIFY2(text.contains(u"No measured attempts in this database"_s), qPrintable(text));
    QVERIFY(text.contains(u"idemctl serve --allow-fault-injection"_s));
    QVERIFY(text.contains(u"/faults/&lt;profile&gt;/"_s));
    QCOMPARE(panel.model()->rowCount(), 0);
    QVERIFY(!panel.useAButton()->isEnabled());
  }

  // A store without the demo schema (dropped, or a database idemctl serve never wrote to): the
  // view and idemctl measure both say which table is missing and what to do.
  void missingTableIsExplained() {
    test::TestDatabase db("ui_measure_notable");
    db.connect().exec("DROP SCHEMA idem_demo CASCADE");
    ui::DbSession session(u"measure"_s);
    MeasurePanel panel;
    QVERIFY(showOn(db.conninfo(), session, panel));
    QCOMPARE(panel.state(), State::MissingTable);
    const QString text = panel.messageLabel()->text();
    QVERIFY2(text.contains(u"no measured attempts table"_s), qPrintable(text));
    QVERIFY(text.contains(u"idem_demo.fault_attempts"_s));
    QVERIFY(text.contains(u"idemctl migrate"_s));

    std::string out;
    QCOMPARE(test::runIdemctl({"measure", "--db", db.conninfo()}, &out), 1);
    QVERIFY2(out.find("has no idem_demo.fault_attempts") != std::string::npos, out.c_str());
  }

  // The console's own role reads the table (migration 0021 grants it); a role without the grant
  // is told which privilege is missing.
  void theConsoleRoleReadsAndAMissingGrantIsNamed() {
    test::TestDatabase db("ui_measure_role");
    const std::string role = "t_measure_" + std::to_string(getpid());
    {
      auto admin = db.connect();
      seed(admin);
      admin.exec("CREATE ROLE " + role + " LOGIN PASSWORD 'measure-pw' IN ROLE idem_console");
    }
    const std::string asConsole = db.conninfo() + " user=" + role + " password=measure-pw";
    {
      ui::DbSession session(u"measure"_s);
      MeasurePanel panel;
      QVERIFY(showOn(asConsole, session, panel));
      QCOMPARE(panel.state(), State::Shown);
      QCOMPARE(panel.model()->reports().size(), std::size_t{3});
    }
    db.connect().exec("REVOKE SELECT ON idem_demo.fault_attempts FROM idem_console");
    {
      ui::DbSession session(u"measure"_s);
      MeasurePanel panel;
      QVERIFY(showOn(asConsole, session, panel));
      QCOMPARE(panel.state(), State::Failed);
      const QString text = panel.messageLabel()->text();
      QVERIFY2(text.contains(u"needs SELECT on idem_demo.fault_attempts"_s), qPrintable(text));
      QCOMPARE(panel.model()->rowCount(), 0);
    }
    db.connect().exec("DROP ROLE " + role);
  }

  // The reading waits on a lock the test holds; the GUI thread keeps ticking meanwhile and the
  // figures arrive once the lock is let go.
  void readingNeverBlocksTheGuiThread() {
    test::TestDatabase db("ui_measure_lock");
    auto conn = db.connect();
    seed(conn);
    ui::DbSession session(u"measure"_s);
    QVERIFY(test::openSession(session, db.conninfo()));
    auto holder = db.connect();
    holder.exec("BEGIN");
    holder.exec("LOCK TABLE idem_demo.fault_attempts IN ACCESS EXCLUSIVE MODE");
    MeasurePanel panel;
    QSignalSpy spy(&panel, &MeasurePanel::loaded);
    panel.setSession(&session);
    panel.show();
    QCOMPARE(panel.state(), State::Loading);
    QCOMPARE(test::ticksWhileHeld(10), 10);
    QCOMPARE(panel.state(), State::Loading);
    QVERIFY(spy.isEmpty());
    holder.exec("COMMIT");
    QVERIFY(loaded(&panel, spy));
    QCOMPARE(panel.state(), State::Shown);
    QCOMPARE(panel.model()->reports().size(), std::size_t{3});
  }
};

QTEST_MAIN(TestMeasureView)
#include "tst_measureview.moc"
