#include "ui/detail/generationmodel.h"

#include <QColor>

#include "ui/common/outcomestyle.h"
#include "ui/common/timefmt.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

GenerationModel::GenerationModel(QObject* parent) : QAbstractTableModel(parent) {}

void GenerationModel::setDetail(const KeyDetail& detail) {
  beginResetModel();
  m_rows.clear();
  m_now = detail.serverNow;
  for (const auto& g : detail.generations) {
    Row row{g, 0, 0};
    for (const auto& e : detail.events) {
      if (e.generation != g.generation) continue;
      if (isExecution(e.outcome)) ++row.executions;
      if (e.outcome == u"replayed"_s || e.outcome == u"waited"_s) row.replays += e.repeats;
    }
    m_rows.push_back(std::move(row));
  }
  endResetModel();
}

void GenerationModel::clear() {
  beginResetModel();
  m_rows.clear();
  endResetModel();
}

const Generation* GenerationModel::generationAt(int row) const {
  return (row >= 0 && row < rowCount()) ? &m_rows[static_cast<std::size_t>(row)].generation : nullptr;
}

int GenerationModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}
int GenerationModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

Qt::ItemFlags GenerationModel::flags(const QModelIndex& index) const {
  return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren : Qt::NoItemFlags;
}

QVariant GenerationModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const Row& row = m_rows[static_cast<std::size_t>(index.row())];
  const Generation& g = row.generation;
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case ColGeneration: return g.generation;
      case ColWhere: return g.live ? tr("live") : tr("archived");
      case ColState: return g.state;
      case ColStatus: return g.status ? QVariant(g.status) : QVariant(u"—"_s);
      case ColResource: return g.resourceRef;
      case ColCreated: return formatAbsolute(g.created);
      case ColExpires: return QString(formatAbsolute(g.expires) % u" ("_s % formatExpiry(g.expires, m_now) % u")"_s);
      case ColArchived:
        return g.live ? QString() : QString(formatAbsolute(g.archivedAt) % u" · "_s % g.archivedBy);
      case ColExecutions: return row.executions;
      case ColReplays: return row.replays;
      case ColFingerprint: return QString(g.fingerprintHex.left(16) + u"…"_s);
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (index.column()) {
      case ColCreated: return formatRelative(g.created, m_now);
      case ColFingerprint: return g.fingerprintHex;
      case ColArchived: return g.purgeAfter.isValid() ? tr("kept until %1").arg(formatAbsolute(g.purgeAfter)) : QVariant();
      default: break;
    }
  }
  if (role == Qt::ForegroundRole && index.column() == ColExecutions && row.executions > 1)
    return outcomeStyle(u"executed_after_expiry"_s).color;
  if (role == Qt::TextAlignmentRole && (index.column() == ColGeneration || index.column() == ColStatus ||
                                        index.column() == ColExecutions || index.column() == ColReplays))
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant GenerationModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case ColGeneration: return tr("Gen");
    case ColWhere: return tr("Where");
    case ColState: return tr("State");
    case ColStatus: return tr("Status");
    case ColResource: return tr("Resource");
    case ColCreated: return tr("Created");
    case ColExpires: return tr("Expires");
    case ColArchived: return tr("Archived");
    case ColExecutions: return tr("Executions");
    case ColReplays: return tr("Replays");
    case ColFingerprint: return tr("Fingerprint");
    default: return {};
  }
}

}  // namespace idem::ui
