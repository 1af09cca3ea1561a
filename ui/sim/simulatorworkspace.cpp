#include "ui/sim/simulatorworkspace.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "core/sim/config_parse.h"
#include "core/sim/presets.h"
#include "core/sim/report.h"
#include "core/sim/scenarios.h"
#include "core/sim/verdict.h"
#include "ui/cases/casebook.h"
#include "ui/sim/causeseditor.h"
#include "ui/sim/chartexport.h"
#include "ui/sim/comparisonmodel.h"
#include "ui/sim/ecdfchart.h"
#include "ui/sim/heatmapmodel.h"
#include "ui/sim/heatmapwidget.h"
#include "ui/sim/livepanel.h"
#include "ui/sim/loadchart.h"
#include "ui/sim/measurepanel.h"
#include "ui/sim/policyeditor.h"
#include "ui/sim/savedscenario.h"
#include "ui/sim/servereditor.h"
#include "ui/sim/simrunner.h"

using namespace Qt::StringLiterals;
namespace core = idem::sim;

namespace idem::ui::sim {
namespace {

QWidget* scrolled(QWidget* content, QWidget* parent) {
  auto* area = new QScrollArea(parent);
  area->setWidget(content);
  area->setWidgetResizable(true);
  area->setFrameShape(QFrame::NoFrame);
  area->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  return area;
}

}  // namespace

SimulatorWorkspace::SimulatorWorkspace(QWidget* parent)
    : QWidget(parent),
      m_policyA(new PolicyEditor(this)),
      m_policyB(new PolicyEditor(this)),
      m_server(new ServerEditor(this)),
      m_causes(new CausesEditor(this)),
      m_runner(new SimRunner(this)),
      m_heatRunner(new SimRunner(this)),
      m_comparison(new ComparisonModel(this)),
      m_heat(new HeatmapModel(this)) {
  m_policyA->setObjectName(u"policyA"_s);
  m_policyB->setObjectName(u"policyB"_s);
  m_splitter = new QSplitter(Qt::Horizontal, this);
  m_splitter->setObjectName(u"simSplitter"_s);
  m_splitter->addWidget(buildLeft());
  m_splitter->addWidget(buildRight());
  m_splitter->setStretchFactor(0, 0);
  m_splitter->setStretchFactor(1, 1);
  m_splitter->setSizes({460, 1000});  // the scenario picker reads whole beside its Save button
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_splitter);

  connect(m_runner, &SimRunner::progress, this, [this](double f) { m_progress->setValue(static_cast<int>(f * 1000)); });
  connect(m_runner, &SimRunner::finished, this, &SimulatorWorkspace::showResults);
  connect(m_heatRunner, &SimRunner::progress, this,
          [this](double f) { m_heatProgress->setValue(static_cast<int>(f * 1000)); });
  connect(m_heatRunner, &SimRunner::resultReady, this,
          [this](int index, const ResultPtr& r) { m_heat->setCell(index, r->duplicates, r->operations); });
  connect(m_heatRunner, &SimRunner::finished, this, [this](bool cancelled) {
    m_heatRun->setEnabled(true);
    m_heatCancel->setEnabled(false);
    emit message(cancelled ? tr("Heatmap cancelled: %1 of %2 cells done.")
                                 .arg(m_heat->filled())
                                 .arg(m_heat->rowCount() * m_heat->columnCount())
                           : tr("Heatmap done."));
  });
  loadScenario(ChargeTwice);
}

QWidget* SimulatorWorkspace::buildLeft() {
  auto* left = new QWidget(this);
  auto* layout = new QVBoxLayout(left);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* top = new QHBoxLayout;
  m_scenario = new QComboBox(left);
  m_scenario->setObjectName(u"scenario"_s);
  // Built-in scenarios carry their enum; saved ones (after a separator) their name.
  // Titles and configs come from core/sim/scenarios, the ones `idemctl simulate --scenario` runs.
  const auto& builtIn = core::builtInScenarios();
  for (std::size_t i = 0; i < builtIn.size(); ++i)
    m_scenario->addItem(QString::fromUtf8(builtIn[i].title.data(), qsizetype(builtIn[i].title.size())), int(i));
  m_scenario->setToolTip(tr("Load a scenario (core/sim/examples, or one you saved): both policies, server and store"));
  m_saveScenario = new QPushButton(tr("Save…"), left);
  m_saveScenario->setObjectName(u"saveScenario"_s);
  m_saveScenario->setToolTip(tr("Save both policies, the server and the store under a name (in your case book)"));
  m_saveScenario->setEnabled(false);  // until there is a case book
  top->addWidget(new QLabel(tr("Scenario"), left));
  top->addWidget(m_scenario, 1);
  top->addWidget(m_saveScenario);
  layout->addLayout(top);
  connect(m_scenario, &QComboBox::activated, this, [this](int i) {
    const QVariant which = m_scenario->itemData(i);
    if (which.typeId() == QMetaType::QString)
      loadSavedScenario(which.toString());
    else
      loadScenario(static_cast<Scenario>(which.toInt()));
  });
  connect(m_saveScenario, &QPushButton::clicked, this, &SimulatorWorkspace::askAndSaveScenario);

  auto* tabs = m_editors = new QTabWidget(left);
  tabs->setObjectName(u"simEditors"_s);
  tabs->addTab(scrolled(m_policyA, tabs), tr("Policy A"));
  tabs->addTab(scrolled(m_policyB, tabs), tr("Policy B"));
  tabs->addTab(scrolled(m_server, tabs), tr("Server && store"));
  tabs->addTab(scrolled(m_causes, tabs), tr("Across keys"));
  layout->addWidget(tabs, 1);

  m_compare = new QCheckBox(tr("Compare with policy B"), left);
  m_compare->setChecked(true);
  layout->addWidget(m_compare);
  auto* buttons = new QHBoxLayout;
  m_run = new QPushButton(tr("Run"), left);
  m_run->setDefault(true);
  m_run->setShortcut(QKeySequence(u"Ctrl+R"_s));
  m_run->setToolTip(tr("Simulate (Ctrl+R)"));
  m_cancel = new QPushButton(tr("Cancel"), left);
  m_cancel->setEnabled(false);
  m_progress = new QProgressBar(left);
  m_progress->setRange(0, 1000);
  m_progress->setTextVisible(false);
  buttons->addWidget(m_run);
  buttons->addWidget(m_cancel);
  buttons->addWidget(m_progress, 1);
  layout->addLayout(buttons);
  m_status = new QLabel(left);
  m_status->setWordWrap(true);
  layout->addWidget(m_status);
  connect(m_run, &QPushButton::clicked, this, &SimulatorWorkspace::run);
  connect(m_cancel, &QPushButton::clicked, this, &SimulatorWorkspace::cancel);
  left->setMinimumWidth(340);
  return left;
}

QWidget* SimulatorWorkspace::buildRight() {
  m_tabs = new QTabWidget(this);
  m_tabs->setObjectName(u"simCharts"_s);

  auto* compare = new QWidget(m_tabs);
  auto* cl = new QVBoxLayout(compare);
  m_summary = new QLabel(compare);
  m_summary->setWordWrap(true);
  m_summary->setTextFormat(Qt::RichText);
  m_summary->setObjectName(u"simSummary"_s);
  m_table = new QTableView(compare);
  m_table->setObjectName(u"comparison"_s);
  m_table->setModel(m_comparison);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->setSelectionMode(QAbstractItemView::ContiguousSelection);
  cl->addWidget(m_summary);
  auto* tableFrame = new ChartFrame(tr("Key numbers side by side"), m_table, compare);
  cl->addWidget(tableFrame, 1);
  m_tabs->addTab(compare, tr("A/B"));

  m_ecdf = new EcdfChart(m_tabs);
  auto* ecdfFrame = new ChartFrame(tr("Each retry's offset after the first attempt (ECDF, log time). A curve right of "
                                      "the magenta TTL line is a retry that can find its key purged."),
                                   m_ecdf, m_tabs);
  m_tabs->addTab(ecdfFrame, tr("Attempt offsets"));

  m_load = new LoadChart(m_tabs);
  auto* loadFrame = new ChartFrame(tr("Per second: offered operations, attempts, successes, requests in flight; the "
                                      "spike or outage shaded."),
                                   m_load, m_tabs);
  m_loadWhich = new QComboBox(loadFrame);
  m_loadWhich->addItems({tr("Policy A"), tr("Policy B")});
  loadFrame->addControl(m_loadWhich);
  connect(m_loadWhich, &QComboBox::currentIndexChanged, this, &SimulatorWorkspace::showLoad);
  m_tabs->addTab(loadFrame, tr("Load"));

  m_heatWidget = new HeatmapWidget(m_heat, m_tabs);
  auto* heatFrame = new ChartFrame(tr("P(duplicate) for each TTL × backoff cap: one simulation per cell with the "
                                      "server model on the left."),
                                   m_heatWidget, m_tabs);
  m_heatWhich = new QComboBox(heatFrame);
  m_heatWhich->addItems({tr("Policy A"), tr("Policy B")});
  m_heatOps = new QSpinBox(heatFrame);
  m_heatOps->setRange(100, 10000000);
  m_heatOps->setValue(20000);
  m_heatOps->setSuffix(tr(" ops/cell"));
  m_heatOps->setGroupSeparatorShown(true);
  m_heatRun = new QPushButton(tr("Run grid"), heatFrame);
  m_heatCancel = new QPushButton(tr("Cancel"), heatFrame);
  m_heatCancel->setEnabled(false);
  m_heatProgress = new QProgressBar(heatFrame);
  m_heatProgress->setRange(0, 1000);
  m_heatProgress->setTextVisible(false);
  m_heatProgress->setMaximumWidth(120);
  for (QWidget* w : std::initializer_list<QWidget*>{m_heatWhich, m_heatOps, m_heatRun, m_heatCancel, m_heatProgress})
    heatFrame->addControl(w);
  connect(m_heatRun, &QPushButton::clicked, this, &SimulatorWorkspace::runHeatmap);
  connect(m_heatCancel, &QPushButton::clicked, this, &SimulatorWorkspace::cancelHeatmap);
  m_tabs->addTab(heatFrame, tr("Duplicate heatmap"));

  m_live = new LivePanel([this](int policy) { return config(policy); }, m_tabs);
  connect(m_live, &LivePanel::keysRequested, this, &SimulatorWorkspace::keysRequested);
  connect(m_live, &LivePanel::message, this, &SimulatorWorkspace::message);
  m_tabs->addTab(m_live, tr("Live"));

  m_measure = new MeasurePanel(m_tabs);
  connect(m_measure, &MeasurePanel::usePolicy, this, [this](int which, const core::Policy& p, const QString& client) {
    policyEditor(which)->setMeasuredPolicy(p, client);
    m_editors->setCurrentIndex(which);
    emit message(
        tr("Policy %1 is now the policy %2 was measured to follow.").arg(which == 0 ? u"A"_s : u"B"_s, client));
  });
  m_tabs->addTab(m_measure, tr("Measure"));

  for (auto* frame : {tableFrame, ecdfFrame, loadFrame, heatFrame})
    connect(frame, &ChartFrame::message, this, &SimulatorWorkspace::message);
  return m_tabs;
}

void SimulatorWorkspace::setSession(DbSession* session) { m_measure->setSession(session); }

void SimulatorWorkspace::loadScenario(Scenario scenario) {
  cancel();
  m_scenario->setCurrentIndex(m_scenario->findData(int(scenario)));
  const auto& builtIn = core::builtInScenarios().at(static_cast<std::size_t>(scenario));
  const core::SimConfig c = core::scenarioConfig(builtIn);
  m_server->setConfig(c);
  m_causes->setConfig(c);
  m_policyA->setPolicy(c.policy);
  const core::Policy b = core::scenarioPolicyB(builtIn);
  if (!b.preset.empty())
    m_policyB->applyPreset(QString::fromStdString(b.preset));  // the editor shows the preset by name
  else
    m_policyB->setPolicy(b);
  clearResults(c);
}

void SimulatorWorkspace::clearResults(const core::SimConfig& c) {
  m_comparison->clear();
  m_ecdf->setResults(nullptr, {}, nullptr, {});
  m_load->setResult(nullptr, {});
  m_heat->setAxes(HeatmapModel::defaultTtls(), HeatmapModel::defaultCaps());
  // Each cell keeps the scenario's arrival window, so its spike or outage still happens.
  m_heatOps->setValue(static_cast<int>(std::min<std::int64_t>(c.clients.operations, m_heatOps->maximum())));
  m_summary->setText(tr("Press <b>Run</b> to simulate both policies against this server and store."));
}

void SimulatorWorkspace::setCaseBook(CaseBook* book) {
  m_book = book;
  connect(book, &CaseBook::changed, this, &SimulatorWorkspace::listSavedScenarios);
  listSavedScenarios();
}

void SimulatorWorkspace::listSavedScenarios() {
  const int kBuiltIn = static_cast<int>(core::builtInScenarios().size());  // the built-in scenarios come first
  const QVariant shown = m_scenario->currentData();
  while (m_scenario->count() > kBuiltIn) m_scenario->removeItem(kBuiltIn);
  const bool open = m_book && m_book->isOpen();
  m_saveScenario->setEnabled(open);
  if (!open) return;
  const auto saved = m_book->scenarios();
  if (!saved.empty()) m_scenario->insertSeparator(kBuiltIn);
  for (const auto& s : saved) m_scenario->addItem(s.name, s.name);
  const int index = m_scenario->findData(shown);
  if (index >= 0) m_scenario->setCurrentIndex(index);
}

void SimulatorWorkspace::askAndSaveScenario() {
  const QVariant shown = m_scenario->currentData();
  bool ok = false;
  const QString name = QInputDialog::getText(this, tr("Save scenario"), tr("Name:"), QLineEdit::Normal,
                                             shown.typeId() == QMetaType::QString ? shown.toString() : QString(), &ok)
                           .trimmed();
  if (ok && !name.isEmpty()) saveScenario(name);
}

bool SimulatorWorkspace::saveScenario(const QString& name) {
  const auto a = config(0);
  const auto b = config(1);
  if (!a || !b) {
    m_status->setText(tr("Not saved: fix the fields marked red first."));
    return false;
  }
  if (!m_book || !m_book->isOpen() ||
      !m_book->saveScenario(name, scenarioToJson({*a, b->policy, m_compare->isChecked()}))) {
    m_status->setText(tr("Not saved: the case book is not available%1.")
                          .arg(m_book && !m_book->error().isEmpty() ? u" ("_s % m_book->error() % u")"_s : QString()));
    return false;
  }
  m_scenario->setCurrentIndex(m_scenario->findData(name));
  m_status->setText(tr("Saved scenario “%1”.").arg(name));
  return true;
}

bool SimulatorWorkspace::loadSavedScenario(const QString& name) {
  if (!m_book) return false;
  const auto saved = m_book->scenarios();
  const auto it = std::find_if(saved.begin(), saved.end(), [&](const CaseBook::Scenario& s) { return s.name == name; });
  QString error = tr("no saved scenario is called “%1”").arg(name);
  const auto scenario = it == saved.end() ? std::nullopt : scenarioFromJson(it->json, &error);
  if (!scenario) {
    m_status->setText(tr("Scenario not loaded: %1.").arg(error));
    return false;
  }
  cancel();
  m_scenario->setCurrentIndex(m_scenario->findData(name));
  m_server->setConfig(scenario->a);
  m_causes->setConfig(scenario->a);
  m_policyA->setPolicy(scenario->a.policy);
  m_policyB->setPolicy(scenario->b);
  m_compare->setChecked(scenario->compare);
  clearResults(scenario->a);
  return true;
}

std::optional<core::SimConfig> SimulatorWorkspace::config(int policy) const {
  const PolicyEditor* editor = policyEditor(policy);
  if (!editor->invalidFields().isEmpty() || !m_server->invalidFields().isEmpty() ||
      !m_causes->invalidFields().isEmpty())
    return std::nullopt;
  core::SimConfig c = m_server->config(editor->policy());
  m_causes->apply(c);
  return c;
}

QString SimulatorWorkspace::title(int policy) const { return policyEditor(policy)->title(); }

void SimulatorWorkspace::run() {
  QStringList bad = m_policyA->invalidFields();
  if (m_compare->isChecked()) bad << m_policyB->invalidFields();
  bad << m_server->invalidFields() << m_causes->invalidFields();
  if (!bad.isEmpty()) {
    m_status->setText(tr("Not run: %1 not a valid duration (use 250ms, 3s, 30m, 24h). Fix the fields marked red.")
                          .arg(bad.join(u", "_s)));
    return;
  }
  std::vector<core::SimConfig> configs{*config(0)};
  if (m_compare->isChecked()) configs.push_back(*config(1));
  m_titles[0] = title(0);
  m_titles[1] = m_compare->isChecked() ? title(1) : QString();
  m_run->setEnabled(false);
  m_cancel->setEnabled(true);
  m_status->setText(
      tr("Simulating %n operation(s) per policy…", nullptr, static_cast<int>(configs.front().clients.operations)));
  m_runner->start(std::move(configs));
}

void SimulatorWorkspace::cancel() {
  m_runner->cancel();
  m_live->cancel();
}

void SimulatorWorkspace::showResults(bool cancelled) {
  m_run->setEnabled(true);
  m_cancel->setEnabled(false);
  if (cancelled) {
    m_status->setText(tr("Cancelled; the last complete results stay shown."));
    return;
  }
  const auto& results = m_runner->results();
  for (int i = 0; i < 2; ++i)
    m_comparison->setResult(i, i < results.size() ? results.at(i) : nullptr,
                            i < results.size() ? m_titles[i] : QString());
  m_ecdf->setResults(m_comparison->result(0), m_titles[0], m_comparison->result(1), m_titles[1]);
  showLoad();
  updateSummary();
  m_status->setText(tr("Done."));
}

void SimulatorWorkspace::showLoad() {
  const int which = m_comparison->result(1) ? m_loadWhich->currentIndex() : 0;
  m_load->setResult(m_comparison->result(which), m_titles[which]);
}

void SimulatorWorkspace::updateSummary() {
  QStringList lines;
  for (int i = 0; i < 2; ++i) {
    const ResultPtr& r = m_comparison->result(i);
    if (!r) continue;
    const QString who = u"<b>"_s % (i == 0 ? u"A"_s : u"B"_s) % u" "_s % m_titles[i].toHtmlEscaped() % u"</b>"_s;
    // The sentence is core's (what `idemctl simulate` prints); the console colours the verdict.
    const core::Verdict v = core::verdictOf(*r);
    const QString headline = QString::fromStdString(v.headline).toHtmlEscaped();
    const QString line = who % u" "_s %
                         (v.exposure == core::Exposure::ChargedTwice
                              ? u"<span style='color:#c01c8c'><b>"_s % headline % u"</b></span>"_s
                              : v.exposure == core::Exposure::CannotChargeTwice ? u"<b>"_s % headline % u"</b>"_s
                                                                               : headline) %
                         u" "_s % QString::fromStdString(v.detail).toHtmlEscaped();
    lines << line;
  }
  m_summary->setText(lines.join(u"<br>"_s));
}

void SimulatorWorkspace::runHeatmap() {
  const int which = m_heatWhich->currentIndex();
  auto base = config(which);
  if (!base) {
    emit message(tr("Heatmap not run: fix the fields marked red first."));
    return;
  }
  base->clients.operations = m_heatOps->value();
  m_heat->setAxes(HeatmapModel::defaultTtls(), HeatmapModel::defaultCaps());
  m_heatWidget->setTitle(tr("P(duplicate) for %1 over TTL × backoff cap (%2 operations per cell)")
                             .arg(title(which), formatCount(m_heatOps->value())));
  m_heatRun->setEnabled(false);
  m_heatCancel->setEnabled(true);
  m_heatRunner->start(m_heat->configs(*base));
}

void SimulatorWorkspace::cancelHeatmap() { m_heatRunner->cancel(); }

void SimulatorWorkspace::setCurrentTab(Tab tab) { m_tabs->setCurrentIndex(tab); }

}  // namespace idem::ui::sim
