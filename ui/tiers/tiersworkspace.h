#pragma once
// The Tiers workspace (product owners): the tier table, the chart of each TTL against the
// retries observed in the trace, the what-if panel, and exports. The analysis runs on the
// session's worker thread (seconds on a large trace: cancellable); late answers are dropped by
// a generation counter. Its Rollout tab shows what tiers in rollout `observe` would have done
// (observedpanel.h), read on the same worker over the same period.
#include <QWidget>
#include <optional>

#include "core/tiers/observed.h"
#include "core/tiers/tiers.h"
#include "ui/common/dbresult.h"
#include "ui/tiers/tiersexport.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSplitter;
class QTabWidget;
class QTableView;

namespace idem::ui {

class DbSession;
class ObservedPanel;
class TierChart;
class TierTableModel;
class WhatIfPanel;

class TiersWorkspace final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TiersWorkspace)

 public:
  explicit TiersWorkspace(DbSession* session, QWidget* parent = nullptr);
  /// The connection the analysis runs on.
  [[nodiscard]] DbSession* session() const { return m_session; }

  /// Reads the report again (also on the first show and after a reconnect).
  void reload();
  void cancel();
  /// The period: retries at or after now() - since.
  void setPeriod(tiers::Millis since);
  /// Whose tiers: each service sharing the store has its own policy in force. Reads again.
  void setService(const QString& service);
  /// The service the view shows (or asks for).
  [[nodiscard]] QString service() const;
  [[nodiscard]] QComboBox* serviceChooser() const { return m_service; }

  bool exportPng(const QString& path);
  bool exportSvg(const QString& path);
  /// Writes the decision sheet and waits for it.
  bool exportPdf(const QString& path);
  /// Writes the decision sheet on a pool thread, then emits pdfExported; the window stays live.
  void exportPdfInBackground(const QString& path);

  [[nodiscard]] bool loaded() const { return m_report.has_value(); }
  [[nodiscard]] bool busy() const { return m_ticket != 0; }
  [[nodiscard]] const std::optional<tiers::Report>& report() const { return m_report; }
  [[nodiscard]] TierTableModel* model() const { return m_model; }
  [[nodiscard]] TierChart* chart() const { return m_chart; }
  [[nodiscard]] WhatIfPanel* whatIf() const { return m_whatIf; }
  [[nodiscard]] ObservedPanel* observed() const { return m_observed; }
  /// The tabs under the chart: What if, Rollout.
  [[nodiscard]] QTabWidget* bottomTabs() const { return m_bottom; }
  /// The rollout's counts arrived (or failed: the panel says so).
  [[nodiscard]] bool observedLoaded() const { return m_observedLoaded; }
  [[nodiscard]] QTableView* table() const { return m_table; }

 signals:
  /// A line for the status bar.
  void message(const QString& text);
  /// A report arrived (or failed: check loaded()).
  void reportLoaded();
  void pdfExported(const QString& path, bool ok);
  /// The rollout's counts arrived.
  void observedLoadedNow();
  /// Open this key in the key browser (a request behind an observed count).
  void keyRequested(const QString& key);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void answered(DbResult<tiers::Report> result);
  void askWhatIf(const QString& tier, qint64 ttlMs);
  void readObserved(const std::string& service, tiers::Millis since);
  void askObservedRequests(const QString& route, tiers::Would would);
  void chooseExport(const QString& kind);
  /// The sheet as shown now (GUI thread).
  [[nodiscard]] DecisionSheet decisionSheet() const;
  void savedOrNot(const QString& path, bool ok);
  void showError(const DbError& error);
  /// The services of the session's store into the chooser, keeping the one chosen.
  void fillServices();

  DbSession* m_session;
  std::optional<tiers::Report> m_report;
  TierTableModel* m_model;
  QTableView* m_table;
  TierChart* m_chart;
  WhatIfPanel* m_whatIf;
  ObservedPanel* m_observed;
  QTabWidget* m_bottom;
  QComboBox* m_period;
  QComboBox* m_service;
  QPushButton* m_refresh;
  QPushButton* m_cancel;
  QPushButton* m_exportMenu;
  QLabel* m_status;
  QLabel* m_error;
  QLabel* m_placeholder;  // until the first report: what this view is and what it waits for
  QSplitter* m_split;
  quint64 m_generation = 0;
  quint64 m_ticket = 0;
  quint64 m_whatIfGeneration = 0;
  quint64 m_observedGeneration = 0;
  bool m_observedLoaded = false;
  std::string m_observedService;  // whose counts are shown: the requests behind them are read for it
  bool m_rolloutTabShown = false;  // brought forward once, the first time there is something to see
  bool m_everShown = false;
};

}  // namespace idem::ui
