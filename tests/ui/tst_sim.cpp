// The Simulator workspace (issue 6, part 4), offscreen: it renders; a run shows exactly the
// core model's numbers for the same config; Cancel stops a long run promptly (the worker
// thread ends, not only the buttons); a preset fills the editor with its values; the heatmap
// has one cell per TTL × cap; every model passes QAbstractItemModelTester; charts export.
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>
#include <set>

#include "core/sim/engine.h"
#include "core/sim/presets.h"
#include "core/sim/config_parse.h"
#include "core/sim/scenarios.h"
#include "ui/sim/causeseditor.h"
#include "ui/sim/chartexport.h"
#include "ui/sim/comparisonmodel.h"
#include "ui/sim/durationedit.h"
#include "ui/sim/ecdfchart.h"
#include "ui/sim/heatmapmodel.h"
#include "ui/sim/heatmapwidget.h"
#include "ui/sim/livecomparisonmodel.h"
#include "ui/sim/liveplan.h"
#include "ui/sim/loadchart.h"
#include "ui/sim/policyeditor.h"
#include "ui/sim/servereditor.h"
#include "ui/sim/simrunner.h"
#include "ui/sim/simulatorworkspace.h"

using namespace idem::ui::sim;
using namespace Qt::StringLiterals;
namespace core = idem::sim;

namespace {

int distinctColours(const QImage& image) {
  std::set<QRgb> colours;
  for (int y = 0; y < image.height(); y += 2)
    for (int x = 0; x < image.width(); x += 2) colours.insert(image.pixel(x, y));
  return static_cast<int>(colours.size());
}

bool waitFinished(QSignalSpy& spy, int timeoutMs) {
  QElapsedTimer t;
  t.start();
  while (spy.isEmpty() && t.elapsed() < timeoutMs) QTest::qWait(20);
  return !spy.isEmpty();
}

}  // namespace

class TestSim : public QObject {
  Q_OBJECT

 private slots:
  void rendersNonEmpty() {
    SimulatorWorkspace ws;
    ws.resize(1400, 900);
    ws.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ws));
    QVERIFY(distinctColours(ws.grab().toImage()) > 20);
    QSignalSpy done(ws.runner(), &SimRunner::finished);
    ws.run();
    QVERIFY(waitFinished(done, 60000));
    for (auto tab : {SimulatorWorkspace::ComparisonTab, SimulatorWorkspace::OffsetsTab, SimulatorWorkspace::LoadTab,
                     SimulatorWorkspace::HeatmapTab, SimulatorWorkspace::LiveTab}) {
      ws.setCurrentTab(tab);
      QTest::qWait(50);
      QVERIFY2(distinctColours(ws.grab().toImage()) > 20, qPrintable(QString::number(tab)));
    }
    QVERIFY(ws.ecdfChart()->curveCount() > 0);
    QVERIFY(ws.loadChart()->seconds() > 10);
    QVERIFY(ws.summaryLabel()->text().contains(u"charges twice"_s));
  }

  void runShowsTheCoreModelsNumbers() {
    SimulatorWorkspace ws;
    new QAbstractItemModelTester(ws.comparisonModel(), QAbstractItemModelTester::FailureReportingMode::QtTest, &ws);
    // The scenario as loaded: 120,000 operations, the outage at 200-320 s.
    QSignalSpy done(ws.runner(), &SimRunner::finished);
    ws.run();
    QVERIFY(waitFinished(done, 60000));
    QCOMPARE(done.first().first().toBool(), false);
    for (int column = 0; column < 2; ++column) {
      const auto config = ws.config(column);
      QVERIFY(config.has_value());
      const core::Result expected = core::simulate(*config);
      const ComparisonModel* m = ws.comparisonModel();
      QVERIFY(m->result(column));
      QCOMPARE(m->result(column)->duplicates, expected.duplicates);
      for (int row = 0; row < ComparisonModel::RowCount; ++row) {
        const auto r = static_cast<ComparisonModel::Row>(row);
        const QModelIndex index = m->index(row, column);
        QCOMPARE(index.data(ComparisonModel::ValueRole), ComparisonModel::value(expected, r));
        QCOMPARE(index.data(Qt::DisplayRole).toString(), ComparisonModel::text(expected, r));
      }
      // The raw numbers the issue names, straight against core's result.
      QCOMPARE(m->index(ComparisonModel::Amplification, column).data(ComparisonModel::ValueRole).toDouble(),
               expected.amplification());
      QCOMPARE(m->index(ComparisonModel::SuccessRate, column).data(ComparisonModel::ValueRole).toDouble(),
               expected.successRate());
      QCOMPARE(m->index(ComparisonModel::Conflicts409, column).data(ComparisonModel::ValueRole).toDouble(),
               static_cast<double>(expected.conflicts409));
      QCOMPARE(m->index(ComparisonModel::DuplicatesPerMillion, column).data(ComparisonModel::ValueRole).toDouble(),
               expected.duplicatesPerMillion());
    }
    // The "done when": with a 30-minute TTL, urllib3 (B, obeys the 40-minute Retry-After)
    // charges twice and the Stripe SDK (A, ignores Retry-After above 60 s) does not.
    QCOMPARE(ws.comparisonModel()->result(0)->config.store.ttl, 30 * 60 * core::kUsecPerSecond);
    QCOMPARE(ws.comparisonModel()->result(0)->duplicatesAfterPurge, 0);
    QVERIFY(ws.comparisonModel()->result(1)->duplicatesAfterPurge > 0);
  }

  // Issue 32: the causes across keys are edited in their own tab, run with the scenario, and the
  // A/B table shows the duplicates with detection and the other way.
  void acrossKeysTabRunsDetectionBothWays() {
    SimulatorWorkspace ws;
    ws.loadScenario(SimulatorWorkspace::NewKeys);
    CausesEditor* causes = ws.causesEditor();
    QCOMPARE(causes->newKeyBox()->value(), 50.0);
    QCOMPARE(causes->detectionBox()->currentIndex(), static_cast<int>(core::CrossKey::Mode::Hold));
    QCOMPARE(causes->meshBox()->currentIndex(), static_cast<int>(CausesEditor::EnvoyRetriable4xx));
    // What the editor writes back is the scenario's causes, field for field.
    const auto shown = ws.config(0);
    QVERIFY(shown.has_value());
    const core::SimConfig file = core::scenarioConfig(*core::findScenario("new-keys"));
    const auto causesOf = [](const core::SimConfig& c) {
      const auto j = core::configToJson(c);
      return j["clients"].dump() + j["store"].dump() + j["intermediary"].dump() + j.value("hedging", nlohmann::ordered_json()).dump();
    };
    QCOMPARE(causesOf(*shown), causesOf(file));

    ws.serverEditor()->operationsBox()->setValue(4000);
    QSignalSpy done(ws.runner(), &SimRunner::finished);
    ws.run();
    QVERIFY(waitFinished(done, 60000));
    const ComparisonModel* m = ws.comparisonModel();
    const auto held = m->result(0);
    QVERIFY(held && held->counterpart);
    QCOMPARE(held->duplicatesNewKey, 0);  // hold for 10 minutes: no re-keyed retry runs again
    QVERIFY(held->counterpart->duplicates > 0);
    QVERIFY(m->index(ComparisonModel::DuplicatesOtherWay, 0).data().toString().endsWith(u"without detection"_s));
    QCOMPARE(m->index(ComparisonModel::HeldOrRejected, 0).data(ComparisonModel::ValueRole).toDouble(),
             static_cast<double>(held->crossKey.held));

    // Detection off: the re-keyed retries run again, and the other way is "with hold".
    causes->detectionBox()->setCurrentIndex(static_cast<int>(core::CrossKey::Mode::Off));
    done.clear();
    ws.run();
    QVERIFY(waitFinished(done, 60000));
    const auto off = m->result(0);
    QVERIFY(off->duplicatesNewKey > 0);
    QCOMPARE(off->counterpart->mode, core::CrossKey::Mode::Hold);
    QVERIFY(m->index(ComparisonModel::DuplicatesOtherWay, 0).data().toString().endsWith(u"with hold"_s));
  }

  void cancelStopsALongRunPromptly() {
    SimulatorWorkspace ws;
    ws.serverEditor()->operationsBox()->setValue(50000000);  // minutes of work at ~2 M attempts/s
    QSignalSpy progress(ws.runner(), &SimRunner::progress);
    QSignalSpy done(ws.runner(), &SimRunner::finished);
    ws.run();
    QVERIFY(ws.runner()->isBusy());
    QTRY_VERIFY_WITH_TIMEOUT(progress.size() >= 3, 20000);  // the engine is under way
    QTest::mouseClick(ws.cancelButton(), Qt::LeftButton);
    QCOMPARE(done.size(), 1);
    QCOMPARE(done.first().first().toBool(), true);
    QVERIFY(ws.runButton()->isEnabled());
    // The run has minutes of work left: a worker that ends inside the bound ended on the cancel.
    QTRY_VERIFY_WITH_TIMEOUT(!ws.runner()->isBusy(), 15000);
    QVERIFY(ws.comparisonModel()->result(0) == nullptr);
  }

  void presetFillsTheEditor_data() {
    QTest::addColumn<QString>("name");
    for (const auto& p : core::presets()) {
      const QString name = QString::fromUtf8(p.name.data(), static_cast<qsizetype>(p.name.size()));
      QTest::newRow(qPrintable(name)) << name;
    }
  }

  void presetFillsTheEditor() {
    QFETCH(QString, name);
    PolicyEditor editor;
    QComboBox* box = editor.presetBox();
    const int index = box->findData(name);
    QVERIFY(index > 0);
    QSignalSpy changed(&editor, &PolicyEditor::changed);
    box->setCurrentIndex(index);
    emit box->activated(index);
    QVERIFY(!changed.isEmpty());
    const core::Policy want = core::findPreset(name.toStdString())->policy;
    const core::Policy got = editor.policy();
    QCOMPARE(QString::fromStdString(got.preset), name);
    QCOMPARE(got.maxAttempts, want.maxAttempts);
    QCOMPARE(got.timeout, want.timeout);
    QCOMPARE(got.deadline, want.deadline);
    QCOMPARE(got.backoff, want.backoff);
    QCOMPARE(got.jitter, want.jitter);
    QCOMPARE(got.base, want.base);
    QCOMPARE(got.multiplier, want.multiplier);
    QCOMPARE(got.cap, want.cap);
    QCOMPARE(got.minDelay, want.minDelay);
    QCOMPARE(got.firstRetryImmediate, want.firstRetryImmediate);
    QCOMPARE(got.retryOn, want.retryOn);
    QCOMPARE(got.retryAfter, want.retryAfter);
    QCOMPARE(got.retryAfterCap, want.retryAfterCap);
    QCOMPARE(got.overCap, want.overCap);
    QCOMPARE(got.budget.type, want.budget.type);
    if (want.budget.type != core::Budget::Type::None) {
      QCOMPARE(got.budget.style, want.budget.style);
      QCOMPARE(got.budget.maxTokens, want.budget.maxTokens);
    }
    QCOMPARE(editor.maxAttemptsBox()->value(), want.maxAttempts);
    // An edit after the preset says so in the title; the preset's values stay otherwise.
    editor.maxAttemptsBox()->setValue(want.maxAttempts + 1);
    QVERIFY(editor.title().contains(u"edited"_s));
  }

  void invalidDurationBlocksTheRun() {
    SimulatorWorkspace ws;
    DurationEdit* timeout = ws.policyEditor(0)->timeoutEdit();
    timeout->setFocus();
    timeout->selectAll();
    QTest::keyClicks(timeout, u"3 parsecs"_s);
    QVERIFY(!timeout->isValid());
    QVERIFY(!ws.config(0).has_value());
    ws.run();
    QVERIFY(!ws.runner()->isRunning());
    timeout->selectAll();
    QTest::keyClicks(timeout, u"750ms"_s);
    QVERIFY(timeout->isValid());
    QCOMPARE(ws.config(0)->policy.timeout, std::optional<core::Usec>(750 * core::kUsecPerMs));
  }

  void heatmapHasTheExpectedGrid() {
    SimulatorWorkspace ws;
    new QAbstractItemModelTester(ws.heatmapModel(), QAbstractItemModelTester::FailureReportingMode::QtTest, &ws);
    ws.heatmapOperationsBox()->setValue(500);
    QSignalSpy done(ws.heatmapRunner(), &SimRunner::finished);
    ws.runHeatmap();
    QVERIFY(waitFinished(done, 120000));
    const HeatmapModel* m = ws.heatmapModel();
    QCOMPARE(m->rowCount(), static_cast<int>(HeatmapModel::defaultTtls().size()));
    QCOMPARE(m->columnCount(), static_cast<int>(HeatmapModel::defaultCaps().size()));
    QCOMPARE(m->filled(), m->rowCount() * m->columnCount());
    for (int r = 0; r < m->rowCount(); ++r)
      for (int c = 0; c < m->columnCount(); ++c) QVERIFY(m->cell(r, c).has_value());
    // Each cell is the core model for its TTL and cap: check one against a direct run.
    auto config = ws.config(0);
    config->clients.operations = 500;
    config->store.ttl = m->ttls().at(1);
    config->policy.cap = m->caps().at(2);
    const core::Result direct = core::simulate(*config);
    QCOMPARE(*m->cell(1, 2), static_cast<double>(direct.duplicates) / static_cast<double>(direct.operations));
    ws.resize(1200, 800);
    ws.setCurrentTab(SimulatorWorkspace::HeatmapTab);
    ws.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ws));
    QVERIFY(distinctColours(ws.heatmapWidget()->grab().toImage()) > 5);
  }

  void modelsPassTheTester() {
    ComparisonModel comparison;
    QAbstractItemModelTester t1(&comparison, QAbstractItemModelTester::FailureReportingMode::QtTest);
    HeatmapModel heat;
    QAbstractItemModelTester t2(&heat, QAbstractItemModelTester::FailureReportingMode::QtTest);
    LiveComparisonModel live;
    QAbstractItemModelTester t3(&live, QAbstractItemModelTester::FailureReportingMode::QtTest);
    core::SimConfig c;
    c.clients.operations = 2000;
    auto r = std::make_shared<const core::Result>(core::simulate(c));
    comparison.setResult(0, r, u"A"_s);
    comparison.setResult(1, r, u"B"_s);
    comparison.clear();
    heat.setAxes({60 * core::kUsecPerSecond}, {core::kUsecPerSecond, 2 * core::kUsecPerSecond});
    heat.setCell(0, 3, 100);
    heat.setCell(1, 0, 100);
    QCOMPARE(heat.cell(0, 0), std::optional<double>(0.03));
    live.setPrediction(r);
    LiveResult lr;
    lr.operations = 100;
    lr.attempts = 120;
    lr.successes = 99;
    live.setLive(lr);
    QVERIFY(live.index(LiveComparisonModel::Amplification, LiveComparisonModel::Agreement).data().isValid());
    live.clear();
  }

  void chartsExportPngAndSvg() {
    SimulatorWorkspace ws;
    ws.resize(1400, 900);
    QSignalSpy done(ws.runner(), &SimRunner::finished);
    ws.run();
    QVERIFY(waitFinished(done, 60000));
    ws.show();
    QVERIFY(QTest::qWaitForWindowExposed(&ws));
    QTemporaryDir dir;
    const std::pair<QWidget*, QString> charts[] = {
        {ws.ecdfChart(), u"ecdf"_s}, {ws.loadChart(), u"load"_s}, {ws.heatmapWidget(), u"heatmap"_s}};
    for (const auto& [chart, name] : charts) {
      chart->resize(800, 500);
      for (const QString& ext : {u"png"_s, u"svg"_s}) {
        const QString path = dir.filePath(name + u"."_s + ext);
        QVERIFY2(exportWidget(chart, path), qPrintable(path));
        QVERIFY2(QFileInfo(path).size() > 500, qPrintable(path));
      }
    }
    QFile svg(dir.filePath(u"ecdf.svg"_s));
    QVERIFY(svg.open(QIODevice::ReadOnly));
    QVERIFY(svg.readAll().contains("<svg"));
  }

  void livePlanScalesTtlAndBackoffTogether() {
    core::SimConfig model;
    model.policy.timeout = 80 * core::kUsecPerSecond;
    model.policy.base = 500 * core::kUsecPerMs;
    model.policy.cap = 5 * core::kUsecPerSecond;
    model.server.failureRate = 0.2;
    model.server.capacityRps = 100;
    LiveSettings s;
    s.compression = 10;
    s.tier.ttl = 30 * core::kUsecPerSecond;
    s.tier.lease = 2 * core::kUsecPerSecond;
    const LivePlan plan = planLive(model, s);
    QCOMPARE(plan.livePolicy.timeout, std::optional<core::Usec>(8 * core::kUsecPerSecond));
    QCOMPARE(plan.livePolicy.base, 50 * core::kUsecPerMs);
    QCOMPARE(plan.livePolicy.cap, std::optional<core::Usec>(500 * core::kUsecPerMs));
    QCOMPARE(plan.prediction.store.ttl, 300 * core::kUsecPerSecond);
    QCOMPARE(plan.prediction.store.lease, std::optional<core::Usec>(20 * core::kUsecPerSecond));
    QCOMPARE(plan.prediction.server.retryAfter, 10 * core::kUsecPerSecond);
    QCOMPARE(plan.prediction.server.failureStatus, 503);
    QCOMPARE(plan.prediction.server.capacityRps, 0.0);
    QCOMPARE(plan.failureRate, 0.2);
    QVERIFY(!plan.notes.isEmpty());
    QVERIFY(plan.prediction.clients.operations >= kPredictionOperations);
  }
};

QTEST_MAIN(TestSim)
#include "tst_sim.moc"
