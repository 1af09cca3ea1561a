#pragma once
// The Live tab: settings for a real run against the embedded endpoint (URL, route and its
// tier, clients, operations, time compression), Start/Cancel with progress, and the live
// numbers beside the model's prediction for the same settings.
#include <QWidget>
#include <functional>
#include <optional>

#include "core/sim/config.h"
#include "ui/sim/liveplan.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QNetworkAccessManager;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;

namespace idem::ui::sim {

class LiveComparisonModel;
class LiveRunner;
class SimRunner;

class LivePanel final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(LivePanel)

 public:
  /// Gives the model config (policy A = 0 or B = 1, server and store) the live run uses.
  using ConfigProvider = std::function<std::optional<idem::sim::SimConfig>(int policy)>;

  LivePanel(ConfigProvider provider, QWidget* parent = nullptr);

  /// The endpoint: $IDEM_DEMO_ENDPOINT (set by idemctl demo), else the running demo's demo.json.
  [[nodiscard]] static QString defaultEndpoint();

  void setEndpoint(const QString& url);
  /// Reads GET /idempotency and fills the route's tier; policyRead follows.
  void readPolicy();
  /// Starts a live run with the current settings (reads the policy first if it is not known).
  void start();
  void cancel();
  [[nodiscard]] LiveSettings settings() const;

  [[nodiscard]] LiveRunner* runner() const { return m_live; }
  [[nodiscard]] SimRunner* predictionRunner() const { return m_prediction; }
  [[nodiscard]] LiveComparisonModel* model() const { return m_model; }
  [[nodiscard]] QSpinBox* clientsBox() const { return m_clients; }
  [[nodiscard]] QSpinBox* operationsBox() const { return m_operations; }
  [[nodiscard]] QDoubleSpinBox* compressionBox() const { return m_compression; }
  [[nodiscard]] QComboBox* policyBox() const { return m_policy; }
  [[nodiscard]] QComboBox* routeBox() const { return m_route; }
  [[nodiscard]] const std::optional<EndpointPolicy>& endpointPolicy() const { return m_endpointPolicy; }

 signals:
  void policyRead(bool ok);
  /// Both the live run and the prediction are done (or the run was cancelled or failed).
  void finished();
  /// "Show in Keys": the key prefix this run used.
  void keysRequested(const QString& prefix);
  void message(const QString& text);

 private:
  void updateMapping();
  void begin();
  void maybeFinished();
  void setBusy(bool busy);

  ConfigProvider m_provider;
  QNetworkAccessManager* m_nam;
  LiveRunner* m_live;
  SimRunner* m_prediction;
  LiveComparisonModel* m_model;
  std::optional<EndpointPolicy> m_endpointPolicy;
  bool m_startAfterRead = false;
  bool m_liveDone = true;
  bool m_predictionDone = true;
  QString m_lastPrefix;

  QLineEdit* m_url;
  QPushButton* m_read;
  QComboBox* m_route;
  QLabel* m_tier;
  QComboBox* m_policy;
  QLineEdit* m_tenant;
  QSpinBox* m_clients;
  QSpinBox* m_operations;
  QDoubleSpinBox* m_compression;
  QLabel* m_mapping;
  QPushButton* m_start;
  QPushButton* m_cancel;
  QProgressBar* m_progress;
  QLabel* m_status;
  QTableView* m_table;
  QLabel* m_notes;
  QPushButton* m_showKeys;
};

}  // namespace idem::ui::sim
