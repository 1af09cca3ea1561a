// The simulator's saved scenarios (issue 19, item 6): "Save…" keeps both policies, the server
// and the store in the agent's case book; a new window (a restart, the same settings and case
// book file) lists it in the scenario picker and loads it back exactly — compared through the
// simulator's own config JSON, every field of both runs.
#include <QCheckBox>
#include <QComboBox>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "core/sim/config_parse.h"
#include "ui/cases/casebook.h"
#include "ui/mainwindow/mainwindow.h"
#include "ui/sim/durationedit.h"
#include "ui/sim/policyeditor.h"
#include "ui/sim/savedscenario.h"
#include "ui/sim/servereditor.h"
#include "ui/sim/simulatorworkspace.h"

using namespace idem;
using namespace idem::ui;
using namespace idem::ui::sim;
using namespace Qt::StringLiterals;

namespace {

/// Everything the run would use for policy A and B, as the simulator's JSON.
std::string runs(const SimulatorWorkspace& w) {
  const auto a = w.config(0);
  const auto b = w.config(1);
  if (!a || !b) return "invalid";
  return idem::sim::configToJson(*a).dump() + "\n" + idem::sim::configToJson(*b).dump() +
         (w.compareBox()->isChecked() ? "\ncompare" : "\nalone");
}

}  // namespace

class TestSavedScenario : public QObject {
  Q_OBJECT

 private slots:
  void savedScenarioComesBackExactlyInANewWindow() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    std::string saved;
    {
      MainWindow window(settings);
      QVERIFY(window.caseBook()->isOpen());
      SimulatorWorkspace* sim = window.simulator();
      sim->loadScenario(SimulatorWorkspace::RetryStorm);
      // Edits in all three editors, off every built-in scenario's values.
      sim->policyEditor(0)->maxAttemptsBox()->setValue(7);
      sim->policyEditor(1)->capEdit()->setText(u"45s"_s);
      sim->serverEditor()->ttlEdit()->setText(u"90m"_s);
      sim->serverEditor()->operationsBox()->setValue(4321);
      sim->compareBox()->setChecked(false);
      saved = runs(*sim);
      QVERIFY2(saved != "invalid", saved.c_str());
      QVERIFY(sim->saveScenario(u"storm, edited"_s));
      QCOMPARE(sim->scenarioBox()->currentText(), u"storm, edited"_s);
      QCOMPARE(runs(*sim), saved);  // saving changes nothing shown
      window.close();
    }
    MainWindow again(settings);
    SimulatorWorkspace* sim = again.simulator();
    QVERIFY(runs(*sim) != saved);  // opens on the first built-in scenario
    const int index = sim->scenarioBox()->findText(u"storm, edited"_s);
    QVERIFY2(index > 3, "the saved scenario is listed after the built-in ones");
    sim->scenarioBox()->setCurrentIndex(index);
    emit sim->scenarioBox()->activated(index);  // as a pick in the list does
    QCOMPARE(runs(*sim), saved);
    QCOMPARE(sim->policyEditor(0)->maxAttemptsBox()->value(), 7);
    QCOMPARE(sim->serverEditor()->operationsBox()->value(), 4321);
    QVERIFY(!sim->compareBox()->isChecked());
  }

  // The built-in "charges twice" scenario names its preset by the old name "stripe" (an alias
  // of stripe-python): the editor shows that preset, not "Custom policy", and a scenario saved
  // from it keeps the preset.
  void aPresetNamedByItsOldNameShowsThatPreset() {
    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    MainWindow window(settings);
    SimulatorWorkspace* sim = window.simulator();
    sim->loadScenario(SimulatorWorkspace::ChargeTwice);
    QCOMPARE(sim->policyEditor(0)->presetBox()->currentData().toString(), u"stripe-python"_s);
    QVERIFY2(!sim->policyEditor(0)->title().startsWith(u"Custom"_s), qPrintable(sim->policyEditor(0)->title()));
    const std::string before = runs(*sim);
    QVERIFY(sim->saveScenario(u"charges twice"_s));
    sim->loadScenario(SimulatorWorkspace::RetryStorm);
    QVERIFY(sim->loadSavedScenario(u"charges twice"_s));
    QCOMPARE(runs(*sim), before);
    QCOMPARE(sim->policyEditor(0)->presetBox()->currentData().toString(), u"stripe-python"_s);
  }

  // A scenario JSON from elsewhere that is not one: refused with the reason, nothing loaded.
  void aBrokenScenarioIsRefusedWithItsReason() {
    QString error;
    QVERIFY(!scenarioFromJson(u"{\"version\": 1}"_s, &error));
    QVERIFY2(error.contains(u"config"_s), qPrintable(error));
    QVERIFY(!scenarioFromJson(
        u"{\"version\": 1, \"config\": {\"store\": {\"ttl\": \"soon\"}}, \"policy_b\": {}}"_s, &error));
    QVERIFY2(error.contains(u"store.ttl"_s), qPrintable(error));

    QTemporaryDir dir;
    QSettings settings(dir.filePath(u"s.ini"_s), QSettings::IniFormat);
    MainWindow window(settings);
    QVERIFY(window.caseBook()->saveScenario(u"broken"_s, u"{\"version\": 1}"_s));
    SimulatorWorkspace* sim = window.simulator();
    const std::string before = runs(*sim);
    QVERIFY(!sim->loadSavedScenario(u"broken"_s));
    QCOMPARE(runs(*sim), before);
  }
};

QTEST_MAIN(TestSavedScenario)
#include "tst_savedscenario.moc"
