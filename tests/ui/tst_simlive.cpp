// Live mode (issue 6, part 5) against a real `idemctl serve` child process on port 0 over a
// fresh test database: N concurrent clients drive POST /v1/payments with fault injection, and
// the live result agrees with the core model within the noise of its sample size.
//
// Scenario with a clear expected number: every attempt fails before execution with p = 0.5
// (Sim-Fail: before, 503, nothing stored), 4 attempts, retried at once: success 1 − p⁴ =
// 0.9375 and amplification 1 + p + p² + p³ = 1.875, exactly one execution (ledger row) per
// successful operation and none for the others.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QtTest>
#include <cmath>

#include "core/sim/engine.h"
#include "tests/endpoint/serve_process.h"
#include "tests/support/testdb.h"
#include "ui/sim/livecomparisonmodel.h"
#include "ui/sim/livepanel.h"
#include "ui/sim/liverunner.h"
#include "ui/sim/policyeditor.h"
#include "ui/sim/servereditor.h"
#include "ui/sim/simulatorworkspace.h"

using namespace idem;
using namespace idem::ui::sim;
using namespace Qt::StringLiterals;
namespace core = idem::sim;

namespace {

core::Policy retryFailuresAtOnce() {
  core::Policy p;
  p.maxAttempts = 4;
  p.timeout = 10 * core::kUsecPerSecond;
  p.deadline.reset();
  p.backoff = core::Backoff::None;
  p.jitter = core::Jitter::None;
  p.retryOn = core::kStatus5xx;
  p.retryAfter = core::RetryAfterMode::Ignore;
  p.budget.type = core::Budget::Type::None;
  return p;
}

core::SimConfig failingServer(double p) {
  core::SimConfig c;
  c.clients.operations = 20000;
  c.server.failureRate = p;
  c.server.latencyMedian = c.server.latencyP99 = 1 * core::kUsecPerMs;
  c.store.ttl = 24LL * 3600 * core::kUsecPerSecond;
  return c;
}

}  // namespace

class TestSimLive : public QObject {
  Q_OBJECT

 private slots:
  void liveAgreesWithTheModelWithinNoise() {
    test::TestDatabase db("ui_simlive");
    test::ServeProcess serve({"--db", db.conninfo(), "--allow-fault-injection", "--threads", "32"});

    SimulatorWorkspace ws;
    ws.serverEditor()->setConfig(failingServer(0.5));
    ws.policyEditor(0)->setPolicy(retryFailuresAtOnce());
    LivePanel* live = ws.livePanel();
    new QAbstractItemModelTester(live->model(), QAbstractItemModelTester::FailureReportingMode::QtTest, &ws);
    live->setEndpoint(u"http://127.0.0.1:%1"_s.arg(serve.port()));
    live->policyBox()->setCurrentIndex(0);
    live->clientsBox()->setValue(8);
    live->operationsBox()->setValue(200);
    live->compressionBox()->setValue(1);
    QSignalSpy done(live, &LivePanel::finished);
    QSignalSpy keys(&ws, &SimulatorWorkspace::keysRequested);
    live->start();
    QTRY_VERIFY_WITH_TIMEOUT(!done.isEmpty(), 120000);
    QVERIFY(live->endpointPolicy().has_value());
    QCOMPARE(live->settings().tier.name, u"payments"_s);

    const LiveResult& r = live->runner()->result();
    QVERIFY2(r.firstError.isEmpty(), qPrintable(r.firstError));
    const double n = 200;
    QCOMPARE(r.operations, 200);
    QCOMPARE(r.ledgerErrors, 0);
    QCOMPARE(r.timeouts, 0);
    // Analytic values with a 4σ binomial tolerance for 200 operations.
    const double p = 0.5;
    const double success = 1 - std::pow(p, 4);
    const double amplification = 1 + p + p * p + p * p * p;
    const double successSd = std::sqrt(success * (1 - success) / n);
    // Attempts per operation: 1..4 with probabilities .5, .25, .125, .125 → variance 1.109.
    const double attemptsSd = std::sqrt(4.625 - amplification * amplification);
    QVERIFY2(std::abs(r.successRate() - success) <= 4 * successSd, qPrintable(QString::number(r.successRate())));
    QVERIFY2(std::abs(r.amplification() - amplification) <= 4 * attemptsSd / std::sqrt(n),
             qPrintable(QString::number(r.amplification())));
    // Every 503 was a Sim-Fail; each success executed exactly once, as the ledger shows.
    QCOMPARE(r.status503, r.attempts - r.successes);
    QCOMPARE(r.executions, r.successes);
    QCOMPARE(r.duplicates, 0);
    QCOMPARE(r.conflicts409, 0);

    // The model's prediction for the same settings, and the table's verdict.
    LiveComparisonModel* m = live->model();
    for (auto row :
         {LiveComparisonModel::Amplification, LiveComparisonModel::SuccessRate, LiveComparisonModel::Status503,
          LiveComparisonModel::Executions, LiveComparisonModel::Duplicates}) {
      const auto d = m->deviation(row);
      QVERIFY(d.has_value());
      QVERIFY2(*d <= 4, qPrintable(u"row %1: %2 sigma"_s.arg(row).arg(*d)));
    }
    const double predicted = m->index(LiveComparisonModel::SuccessRate, LiveComparisonModel::Model)
                                 .data(LiveComparisonModel::ValueRole)
                                 .toDouble();
    QVERIFY(std::abs(predicted - success) < 0.01);  // 20,000 model operations

    // The keys are ordinary keys in the store: one per operation that executed.
    auto conn = db.connect();
    const std::string like = r.keyPrefix.toStdString() + "%";
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem.keys WHERE idem_key LIKE $1 AND tenant = 'acct_sim'", {like})
                 .integer(0, "n"),
             static_cast<long long>(r.successes));
    QCOMPARE(conn.exec("SELECT count(*) AS n FROM idem_demo.ledger WHERE idem_key LIKE $1", {like}).integer(0, "n"),
             static_cast<long long>(r.executions));
  }

  void timeoutsLeaveWorkRunningAndRetriesGet409() {
    // Executions take 600 ms live, the client gives up after 200 ms and retries 250 ms later:
    // the retry finds the key processing (409) and the next one replays it. No duplicates:
    // the lease (30 s) outlives the execution.
    test::TestDatabase db("ui_simlive409");
    test::ServeProcess serve({"--db", db.conninfo(), "--allow-fault-injection", "--threads", "32"});
    SimulatorWorkspace ws;
    core::SimConfig c = failingServer(0);
    c.server.latencyMedian = c.server.latencyP99 = 600 * core::kUsecPerMs;
    ws.serverEditor()->setConfig(c);
    core::Policy policy = retryFailuresAtOnce();
    policy.timeout = 200 * core::kUsecPerMs;
    policy.retryOn = core::kTimeout | core::kConflict409 | core::kStatus5xx;
    policy.backoff = core::Backoff::Constant;
    policy.base = 250 * core::kUsecPerMs;
    policy.maxAttempts = 6;
    ws.policyEditor(0)->setPolicy(policy);
    LivePanel* live = ws.livePanel();
    live->setEndpoint(u"http://127.0.0.1:%1"_s.arg(serve.port()));
    live->operationsBox()->setValue(20);
    live->clientsBox()->setValue(10);
    live->compressionBox()->setValue(1);
    QSignalSpy done(live, &LivePanel::finished);
    live->start();
    QTRY_VERIFY_WITH_TIMEOUT(!done.isEmpty(), 120000);
    const LiveResult& r = live->runner()->result();
    QVERIFY2(r.firstError.isEmpty(), qPrintable(r.firstError));
    QCOMPARE(r.operations, 20);
    QVERIFY(r.timeouts >= 20);
    QVERIFY(r.conflicts409 > 0);
    QCOMPARE(r.executions, 20);  // the work went on after the timeouts: one execution each
    QCOMPARE(r.duplicates, 0);
    QCOMPARE(r.successes, 20);
  }
};

QTEST_MAIN(TestSimLive)
#include "tst_simlive.moc"
