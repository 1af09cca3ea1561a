#pragma once
// Live beside the model: one row per number (amplification, success rate, 409s, 503s,
// timeouts, executions, duplicates), columns live, the model's prediction for the same
// settings, and whether the live number lies within the noise of its sample size (3σ of a
// binomial/Poisson count for n live operations; amplification from the model's own
// distribution of attempts per operation).
#include <QAbstractTableModel>

#include "ui/sim/liverunner.h"
#include "ui/sim/simrunner.h"

namespace idem::ui::sim {

class LiveComparisonModel final : public QAbstractTableModel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(LiveComparisonModel)

 public:
  enum Row {
    Operations,
    Attempts,
    Amplification,
    SuccessRate,
    Conflicts409,
    Status503,
    Timeouts,
    Executions,
    Duplicates,
    RowCount
  };
  enum Column { Live, Model, Agreement, ColumnCount };
  static constexpr int ValueRole = Qt::UserRole + 1;

  explicit LiveComparisonModel(QObject* parent = nullptr);

  void setLive(const LiveResult& live);
  void setPrediction(const ResultPtr& prediction);
  void clear();

  /// Live value of row (per operation for counts: rates; amplification; success rate).
  [[nodiscard]] static std::optional<double> liveValue(const LiveResult& live, Row row);
  /// Model's expectation for row with n live operations, and its standard deviation.
  [[nodiscard]] static std::optional<std::pair<double, double>> expected(const idem::sim::Result& model, Row row,
                                                                         double n);
  /// |live − expected| ÷ σ; nullopt when either side is missing.
  [[nodiscard]] std::optional<double> deviation(Row row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::optional<LiveResult> m_live;
  ResultPtr m_model;
};

}  // namespace idem::ui::sim
