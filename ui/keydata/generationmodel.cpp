#include "ui/keydata/generationmodel.h"

#include <QColor>

#include "ui/common/outcomestyle.h"
#include "ui/common/timefmt.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

GenerationModel::GenerationModel(QObject* parent) : QAbstractTableModel(parent) {}

void GenerationModel::setDetail(SharedKeyDetail detail) {
  beginResetModel();
  m_detail = std::move(detail);
  m_now = m_detail->serverNow();
  endResetModel();
}

void GenerationModel::clear() { setDetail(noKeyDetail()); }

const explain::Generation* GenerationModel::generationAt(int row) const {
  return (row >= 0 && row < rowCount()) ? &m_detail->generations()[static_cast<std::size_t>(row)] : nullptr;
}

int GenerationModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_detail->generations().size());
}
int GenerationModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

Qt::ItemFlags GenerationModel::flags(const QModelIndex& index) const {
  return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren : Qt::NoItemFlags;
}

QVariant GenerationModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const auto i = static_cast<std::size_t>(index.row());
  const explain::Generation& g = m_detail->generations()[i];
  const explain::GenerationSummary& summary = m_detail->explanation.generations[i];
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case ColGeneration: return g.number;
      case ColWhere: return g.live ? tr("live") : tr("archived");
      case ColState: return QString::fromStdString(g.state);
      case ColStatus: return g.status ? QVariant(*g.status) : QVariant(u"—"_s);
      case ColResource: return QString::fromStdString(g.resourceRef.value_or(""));
      case ColCreated: return formatAbsolute(toDateTime(g.createdAt));
      case ColExpires: {
        const QDateTime expires = toDateTime(g.expiresAt);
        return QString(formatAbsolute(expires) % u" ("_s % formatExpiry(expires, m_now) % u")"_s);
      }
      case ColArchived:
        return g.live ? QString()
                      : QString(formatAbsolute(toDateTime(g.archivedAt)) % u" · "_s %
                                QString::fromStdString(g.archivedBy));
      case ColExecutions: return summary.executions;
      case ColReplays: return summary.replays;
      case ColFingerprint: return QString(QString::fromStdString(g.fingerprintHex.substr(0, 16)) + u"…"_s);
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (index.column()) {
      case ColCreated: return formatRelative(toDateTime(g.createdAt), m_now);
      case ColFingerprint: return QString::fromStdString(g.fingerprintHex);
      case ColArchived:
        return g.purgeAfter ? tr("kept until %1").arg(formatAbsolute(toDateTime(g.purgeAfter))) : QVariant();
      default: break;
    }
  }
  if (role == Qt::ForegroundRole && index.column() == ColExecutions && summary.executions > 1)
    return outcomeStyle(trace::Outcome::ExecutedAfterExpiry).color;
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
