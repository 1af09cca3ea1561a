#pragma once
// The Simulator workspace (for engineers): two client policies (A and B) and the server
// and key-store model on the left with Run/Cancel and progress; on the right the A/B numbers,
// the attempt-offset ECDF against the TTL, load over time, the P(duplicate) heatmap over
// TTL × backoff cap, Live mode against the embedded endpoint, and Measure: the policies real
// clients were measured to follow, loadable as A or B. It owns its models; every
// simulation runs on a worker thread (SimRunner).
#include <QWidget>
#include <optional>

#include "core/sim/config.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;
class QTabWidget;
class QTableView;

namespace idem::ui {
class CaseBook;
class DbSession;
}

namespace idem::ui::sim {

class ChartFrame;
class CausesEditor;
class ComparisonModel;
class EcdfChart;
class HeatmapModel;
class HeatmapWidget;
class LivePanel;
class LoadChart;
class MeasurePanel;
class PolicyEditor;
class ServerEditor;
class SimRunner;

class SimulatorWorkspace final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(SimulatorWorkspace)

 public:
  /// The built-in scenarios in core::builtInScenarios() order.
  enum Scenario { ChargeTwice, RetryStorm, BudgetSpike, NewKeys };
  enum Tab { ComparisonTab, OffsetsTab, LoadTab, HeatmapTab, LiveTab, MeasureTab };

  explicit SimulatorWorkspace(QWidget* parent = nullptr);

  /// The store the Measure tab reads recorded client attempts from (none: it says so).
  void setSession(idem::ui::DbSession* session);
  /// Loads a scenario: both policies, the server and the store.
  void loadScenario(Scenario scenario);
  /// Where "Save scenario…" keeps scenarios (the agent's case book); the picker lists them.
  void setCaseBook(idem::ui::CaseBook* book);
  /// Keeps both policies, the server and the store under name (replacing one of that name);
  /// false, saying why, while a field is invalid or without a case book.
  bool saveScenario(const QString& name);
  /// Loads the saved scenario called name exactly as it was saved; false, saying why, if it cannot.
  bool loadSavedScenario(const QString& name);
  [[nodiscard]] QComboBox* scenarioBox() const { return m_scenario; }
  /// The config for policy A (0) or B (1), or nothing while a field holds an invalid value.
  [[nodiscard]] std::optional<idem::sim::SimConfig> config(int policy) const;
  /// Runs A (and B when compared) in the background.
  void run();
  void cancel();
  /// Runs the heatmap grid for the policy chosen above it.
  void runHeatmap();
  void cancelHeatmap();
  void setCurrentTab(Tab tab);

  [[nodiscard]] PolicyEditor* policyEditor(int policy) const { return policy == 0 ? m_policyA : m_policyB; }
  [[nodiscard]] ServerEditor* serverEditor() const { return m_server; }
  [[nodiscard]] CausesEditor* causesEditor() const { return m_causes; }
  [[nodiscard]] QCheckBox* compareBox() const { return m_compare; }
  [[nodiscard]] SimRunner* runner() const { return m_runner; }
  [[nodiscard]] SimRunner* heatmapRunner() const { return m_heatRunner; }
  [[nodiscard]] ComparisonModel* comparisonModel() const { return m_comparison; }
  [[nodiscard]] HeatmapModel* heatmapModel() const { return m_heat; }
  [[nodiscard]] EcdfChart* ecdfChart() const { return m_ecdf; }
  [[nodiscard]] LoadChart* loadChart() const { return m_load; }
  [[nodiscard]] HeatmapWidget* heatmapWidget() const { return m_heatWidget; }
  [[nodiscard]] LivePanel* livePanel() const { return m_live; }
  [[nodiscard]] MeasurePanel* measurePanel() const { return m_measure; }
  [[nodiscard]] QLabel* summaryLabel() const { return m_summary; }
  [[nodiscard]] QPushButton* runButton() const { return m_run; }
  [[nodiscard]] QPushButton* cancelButton() const { return m_cancel; }
  [[nodiscard]] QSpinBox* heatmapOperationsBox() const { return m_heatOps; }
  [[nodiscard]] QSplitter* splitter() const { return m_splitter; }

 signals:
  /// A line for the status bar.
  void message(const QString& text);
  /// Live mode asks to show its keys (a prefix) in the key browser.
  void keysRequested(const QString& prefix);

 private:
  QWidget* buildLeft();
  QWidget* buildRight();
  void showResults(bool cancelled);
  void clearResults(const idem::sim::SimConfig& config);
  void listSavedScenarios();
  void askAndSaveScenario();
  void showLoad();
  void updateSummary();
  [[nodiscard]] QString title(int policy) const;

  PolicyEditor* m_policyA;
  PolicyEditor* m_policyB;
  ServerEditor* m_server;
  CausesEditor* m_causes;
  SimRunner* m_runner;
  SimRunner* m_heatRunner;
  ComparisonModel* m_comparison;
  HeatmapModel* m_heat;
  QSplitter* m_splitter = nullptr;
  QComboBox* m_scenario = nullptr;
  QPushButton* m_saveScenario = nullptr;
  idem::ui::CaseBook* m_book = nullptr;
  QCheckBox* m_compare = nullptr;
  QPushButton* m_run = nullptr;
  QPushButton* m_cancel = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_status = nullptr;
  QTabWidget* m_tabs = nullptr;
  QLabel* m_summary = nullptr;
  QTableView* m_table = nullptr;
  EcdfChart* m_ecdf = nullptr;
  LoadChart* m_load = nullptr;
  QComboBox* m_loadWhich = nullptr;
  HeatmapWidget* m_heatWidget = nullptr;
  QComboBox* m_heatWhich = nullptr;
  QSpinBox* m_heatOps = nullptr;
  QPushButton* m_heatRun = nullptr;
  QPushButton* m_heatCancel = nullptr;
  QProgressBar* m_heatProgress = nullptr;
  LivePanel* m_live = nullptr;
  MeasurePanel* m_measure = nullptr;
  QTabWidget* m_editors = nullptr;
  QString m_titles[2];
};

}  // namespace idem::ui::sim
