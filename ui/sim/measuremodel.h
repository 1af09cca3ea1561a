#pragma once
// The Measure view's table: one row per client (User-Agent) and fault profile, with core's
// figures (core/measure/attempts.h) as `idemctl measure` prints them: operations, attempts per
// operation, whether the key stayed the same, whether Retry-After was honoured, how long the
// client waited on a hanging attempt, and per retry the gap between arrivals (min / p50 / max).
// ValueRole gives the numbers exactly as core computed them.
#include <QAbstractTableModel>
#include <vector>

#include "core/measure/attempts.h"

namespace idem::ui::sim {

class MeasureModel final : public QAbstractTableModel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(MeasureModel)

 public:
  enum Column {
    ClientColumn,
    FaultColumn,
    OperationsColumn,
    AttemptsColumn,
    KeyColumn,
    RetryAfterColumn,
    TimeoutColumn,
    FirstRetryColumn  // retry 1's gap; retry n is FirstRetryColumn + n - 1
  };
  /// Spreads: QVariantList{min, p50, max}; operations: int; the key: bool or null (cannot tell);
  /// Retry-After: bool (honoured) or null; the client column: the client's index in reports().
  static constexpr int ValueRole = Qt::UserRole + 1;

  explicit MeasureModel(QObject* parent = nullptr);

  void setReports(std::vector<idem::measure::ClientReport> reports);
  void clear();
  [[nodiscard]] const std::vector<idem::measure::ClientReport>& reports() const { return m_reports; }
  /// The client a row belongs to (index into reports()), -1 for none.
  [[nodiscard]] int clientOfRow(int row) const;
  /// The first row of a client, -1 for none.
  [[nodiscard]] int firstRowOf(int client) const;
  [[nodiscard]] int retryColumns() const { return m_retries; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  /// "(no User-Agent)" for an empty one.
  [[nodiscard]] static QString clientName(const idem::measure::ClientReport& client);
  /// "0.500 / 0.512 / 0.530": min / p50 / max seconds to the millisecond, as `idemctl measure`
  /// prints them.
  [[nodiscard]] static QString spreadText(const idem::measure::Spread& s);

 private:
  struct Row {
    int client;
    int fault;
  };
  [[nodiscard]] QVariant display(const idem::measure::ClientReport& c, const idem::measure::FaultReport& f, int column,
                                 bool firstOfClient) const;
  [[nodiscard]] QVariant value(const idem::measure::FaultReport& f, int column, int client) const;
  [[nodiscard]] static QString toolTip(const idem::measure::FaultReport& f, int column);

  std::vector<idem::measure::ClientReport> m_reports;
  std::vector<Row> m_rows;
  int m_retries = 0;
};

}  // namespace idem::ui::sim
