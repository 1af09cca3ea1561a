#pragma once
// P(duplicate) over a grid of store TTL (rows) × backoff cap (columns): each cell is one
// simulation of the chosen policy with that TTL and cap. Cells fill in as the background runs
// finish; an empty cell is still pending.
#include <QAbstractTableModel>
#include <QList>
#include <optional>
#include <vector>

#include "core/sim/config.h"

namespace idem::ui::sim {

class HeatmapModel final : public QAbstractTableModel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(HeatmapModel)

 public:
  /// P(duplicate) = duplicates ÷ operations, a double; null while pending.
  static constexpr int ValueRole = Qt::UserRole + 1;

  explicit HeatmapModel(QObject* parent = nullptr);

  /// The default axes: TTL 1 min … 24 h, cap 100 ms … 1 h.
  [[nodiscard]] static QList<idem::sim::Usec> defaultTtls();
  [[nodiscard]] static QList<idem::sim::Usec> defaultCaps();

  /// New axes, every cell pending.
  void setAxes(const QList<idem::sim::Usec>& ttls, const QList<idem::sim::Usec>& caps);
  /// One config per cell, row-major, from base with the row's TTL and the column's cap.
  [[nodiscard]] std::vector<idem::sim::SimConfig> configs(const idem::sim::SimConfig& base) const;
  /// Result for cell number index (row-major, as configs()).
  void setCell(int index, std::int64_t duplicates, std::int64_t operations);

  [[nodiscard]] const QList<idem::sim::Usec>& ttls() const { return m_ttls; }
  [[nodiscard]] const QList<idem::sim::Usec>& caps() const { return m_caps; }
  [[nodiscard]] std::optional<double> cell(int row, int column) const;
  [[nodiscard]] int filled() const { return m_filled; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  QList<idem::sim::Usec> m_ttls;
  QList<idem::sim::Usec> m_caps;
  struct Cell {
    std::int64_t duplicates = -1;  // -1: pending
    std::int64_t operations = 0;
  };
  QList<Cell> m_cells;
  int m_filled = 0;
};

/// P(duplicate) as a short label: "0", "12/M", "3.4 %".
[[nodiscard]] QString formatDuplicateShare(double p);

}  // namespace idem::ui::sim
