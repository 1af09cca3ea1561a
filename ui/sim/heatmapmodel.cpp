#include "ui/sim/heatmapmodel.h"

#include <QLocale>

#include "ui/sim/comparisonmodel.h"

using namespace Qt::StringLiterals;
namespace core = idem::sim;

namespace idem::ui::sim {

QString formatDuplicateShare(double p) {
  if (p <= 0) return u"0"_s;
  if (p < 0.001) return QLocale().toString(p * 1e6, 'g', 3) + u"/M"_s;
  return QLocale().toString(100 * p, 'g', 3) + u" %"_s;
}

HeatmapModel::HeatmapModel(QObject* parent) : QAbstractTableModel(parent) { setAxes(defaultTtls(), defaultCaps()); }

QList<core::Usec> HeatmapModel::defaultTtls() {
  constexpr core::Usec m = 60 * core::kUsecPerSecond;
  return {1 * m, 5 * m, 15 * m, 30 * m, 60 * m, 6 * 60 * m, 24 * 60 * m};
}

QList<core::Usec> HeatmapModel::defaultCaps() {
  constexpr core::Usec s = core::kUsecPerSecond;
  return {s / 10, 1 * s, 5 * s, 30 * s, 120 * s, 600 * s, 3600 * s};
}

void HeatmapModel::setAxes(const QList<core::Usec>& ttls, const QList<core::Usec>& caps) {
  beginResetModel();
  m_ttls = ttls;
  m_caps = caps;
  m_cells = QList<Cell>(ttls.size() * caps.size());
  m_filled = 0;
  endResetModel();
}

std::vector<core::SimConfig> HeatmapModel::configs(const core::SimConfig& base) const {
  std::vector<core::SimConfig> out;
  out.reserve(static_cast<std::size_t>(m_cells.size()));
  for (core::Usec ttl : m_ttls)
    for (core::Usec cap : m_caps) {
      core::SimConfig c = base;
      c.store.ttl = ttl;
      c.policy.cap = cap;
      out.push_back(std::move(c));
    }
  return out;
}

void HeatmapModel::setCell(int index, std::int64_t duplicates, std::int64_t operations) {
  if (index < 0 || index >= m_cells.size() || m_caps.isEmpty()) return;
  Cell& c = m_cells[index];
  if (c.duplicates < 0) ++m_filled;
  c = {duplicates, operations};
  const QModelIndex at = this->index(static_cast<int>(index / m_caps.size()), static_cast<int>(index % m_caps.size()));
  emit dataChanged(at, at);
}

std::optional<double> HeatmapModel::cell(int row, int column) const {
  if (row < 0 || column < 0 || row >= m_ttls.size() || column >= m_caps.size()) return std::nullopt;
  const Cell& c = m_cells.at(row * m_caps.size() + column);
  if (c.duplicates < 0) return std::nullopt;
  return c.operations > 0 ? static_cast<double>(c.duplicates) / static_cast<double>(c.operations) : 0.0;
}

int HeatmapModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_ttls.size());
}
int HeatmapModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_caps.size());
}

QVariant HeatmapModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const auto p = cell(index.row(), index.column());
  switch (role) {
    case Qt::DisplayRole:
      return p ? formatDuplicateShare(*p) : QString();
    case ValueRole:
      return p ? QVariant(*p) : QVariant();
    case Qt::ToolTipRole: {
      const Cell& c = m_cells.at(index.row() * m_caps.size() + index.column());
      if (c.duplicates < 0) return tr("pending");
      return tr("TTL %1, backoff cap %2: %3 duplicates in %4 operations")
          .arg(headerData(index.row(), Qt::Vertical).toString(), headerData(index.column(), Qt::Horizontal).toString(),
               formatCount(c.duplicates), formatCount(c.operations));
    }
    default:
      return {};
  }
}

QVariant HeatmapModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || section < 0) return {};
  const auto& axis = orientation == Qt::Vertical ? m_ttls : m_caps;
  if (section >= axis.size()) return {};
  return formatSeconds(core::toSeconds(axis.at(section)));
}

}  // namespace idem::ui::sim
