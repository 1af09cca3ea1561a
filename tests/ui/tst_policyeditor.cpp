// The simulator's policy editor names where its values came from: a preset by its current name
// even when the config used an old alias ("stripe" is stripe-python since issue 20), and a
// policy loaded from the Measure tab as the client it was measured on, "(edited)" once changed.
#include <QComboBox>
#include <QSpinBox>
#include <QtTest>

#include "core/sim/config_parse.h"
#include "core/sim/presets.h"
#include "ui/sim/policyeditor.h"
#include "ui/sim/simulatorworkspace.h"

using namespace idem::ui::sim;
using namespace Qt::StringLiterals;
namespace core = idem::sim;

class TestPolicyEditor : public QObject {
  Q_OBJECT

 private slots:
  void anAliasShowsItsPreset() {
    PolicyEditor editor;
    editor.setPolicy(core::parseConfigText(R"({"policy": {"preset": "stripe"}})").policy);
    QCOMPARE(editor.presetBox()->currentData().toString(), u"stripe-python"_s);
    QCOMPARE(editor.policy().preset, std::string("stripe-python"));
    QVERIFY2(!editor.title().startsWith(u"Custom"_s), qPrintable(editor.title()));
    // The simulator's first scenario starts A on the alias.
    SimulatorWorkspace ws;
    QCOMPARE(ws.policyEditor(0)->presetBox()->currentData().toString(), u"stripe-python"_s);
  }

  void aMeasuredPolicyIsTitledByItsClient() {
    PolicyEditor editor;
    core::Policy fitted = core::findPreset("urllib3")->policy;
    fitted.preset.clear();
    editor.setMeasuredPolicy(fitted, u"python-urllib3/2.7.0 extra/1"_s);
    QCOMPARE(editor.title(), u"Measured python-urllib3/2.7.0"_s);
    QCOMPARE(core::policyToJson(editor.policy()).dump(), core::policyToJson(fitted).dump());
    editor.maxAttemptsBox()->setValue(fitted.maxAttempts + 1);
    QCOMPARE(editor.title(), u"python-urllib3/2.7.0 (edited)"_s);
    // A preset chosen afterwards is that preset again.
    QVERIFY(editor.applyPreset(u"grpc"_s));
    QVERIFY2(!editor.title().contains(u"urllib3"_s), qPrintable(editor.title()));
  }
};

QTEST_MAIN(TestPolicyEditor)
#include "tst_policyeditor.moc"
