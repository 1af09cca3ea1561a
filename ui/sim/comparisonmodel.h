#pragma once
// The A/B comparison: one row per key number (amplification, success, 409s, duplicates per
// million, horizon H against the TTL, …), one column per policy. Display text is formatted;
// ValueRole gives the number exactly as core computed it.
#include <QAbstractTableModel>
#include <array>

#include "ui/sim/simrunner.h"

namespace idem::ui::sim {

class ComparisonModel final : public QAbstractTableModel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ComparisonModel)

 public:
  enum Row {
    Operations,
    Attempts,
    Amplification,
    SuccessRate,
    Conflicts409,
    ServerErrors,
    Timeouts,
    BudgetRefused,
    Executions,
    Duplicates,
    DuplicatesPerMillion,
    DuplicatesAfterPurge,
    DuplicatesOther,
    DuplicatesNewKey,
    DuplicatesOtherWay,
    NewKeyRetries,
    HeldOrRejected,
    MeantNeverRan,
    Horizon,
    MaxQueueWait,
    Recovery,
    RowCount
  };
  /// The number behind a cell (double; null for none, e.g. an unbounded horizon).
  static constexpr int ValueRole = Qt::UserRole + 1;

  explicit ComparisonModel(QObject* parent = nullptr);

  /// column 0 = A, 1 = B; a null result clears the column.
  void setResult(int column, const ResultPtr& result, const QString& title);
  void clear();
  [[nodiscard]] const ResultPtr& result(int column) const { return m_results.at(static_cast<std::size_t>(column)); }
  [[nodiscard]] QString title(int column) const { return m_titles.at(static_cast<std::size_t>(column)); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  /// The number core reports for row (what ValueRole gives).
  [[nodiscard]] static QVariant value(const idem::sim::Result& r, Row row);
  /// How the table shows that number.
  [[nodiscard]] static QString text(const idem::sim::Result& r, Row row);
  [[nodiscard]] static QString rowName(Row row);

 private:
  std::array<ResultPtr, 2> m_results;
  std::array<QString, 2> m_titles;
};

/// "1,234" / "0.938" / "93.75 %": shared by the comparison and the live tables.
[[nodiscard]] QString formatCount(qint64 n);
[[nodiscard]] QString formatRatio(double r);
[[nodiscard]] QString formatPercent(double fraction);
/// Seconds as "850 ms", "2 min 30 s", "3 h".
[[nodiscard]] QString formatSeconds(double s);

}  // namespace idem::ui::sim
