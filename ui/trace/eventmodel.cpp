#include "ui/trace/eventmodel.h"

#include "ui/common/outcomestyle.h"
#include "ui/common/timefmt.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

EventModel::EventModel(QObject* parent) : QAbstractTableModel(parent) {}

void EventModel::setDetail(const KeyDetail& detail) {
  beginResetModel();
  m_detail = detail;
  endResetModel();
}

void EventModel::clear() { setDetail({}); }

const KeyEvent* EventModel::eventAt(int row) const {
  return (row >= 0 && row < rowCount()) ? &m_detail.events[static_cast<std::size_t>(row)] : nullptr;
}

int EventModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_detail.events.size());
}
int EventModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

Qt::ItemFlags EventModel::flags(const QModelIndex& index) const {
  return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren : Qt::NoItemFlags;
}

QString EventModel::describe(int row) const {
  const KeyEvent* e = eventAt(row);
  if (!e) return {};
  QString text = outcomeStyle(e->outcome).label % u"\n"_s % formatAbsolute(e->at) % u" ("_s %
                 formatRelative(e->at, m_detail.serverNow) % u")"_s;
  if (e->generation) text += u"\n"_s % tr("generation %1").arg(e->generation);
  if (e->status) text += u"\n"_s % tr("status %1").arg(e->status);
  const bool folded = e->repeats > 1;
  if (folded)
    text += u"\n"_s % tr("%1 identical decisions until %2, folded into one trace row (a retry storm)")
                          .arg(e->repeats)
                          .arg(formatAbsolute(e->lastAt));
  if (e->latencyMs >= 0)
    text += u"\n"_s % (folded ? tr("slowest %1 ms") : tr("latency %1 ms")).arg(e->latencyMs, 0, 'f', 1);
  if (!e->requestId.isEmpty())
    text += u"\n"_s % (folded ? tr("last request %1") : tr("request %1")).arg(e->requestId);
  if (!e->fingerprintHex.isEmpty()) text += u"\n"_s % tr("fingerprint %1…").arg(e->fingerprintHex.left(16));
  if (!e->detail.isEmpty()) text += u"\n"_s % e->detail;
  return text;
}

QVariant EventModel::data(const QModelIndex& index, int role) const {
  const KeyEvent* e = index.isValid() ? eventAt(index.row()) : nullptr;
  if (!e || index.column() >= ColumnCount) return {};
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case ColAt: return formatAbsolute(e->at);
        case ColOutcome:
          return e->repeats > 1 ? tr("%1 ×%2").arg(outcomeStyle(e->outcome).label).arg(e->repeats)
                                : outcomeStyle(e->outcome).label;
        case ColGeneration: return e->generation ? QVariant(e->generation) : QVariant();
        case ColStatus: return e->status ? QVariant(e->status) : QVariant();
        case ColLatency: return e->latencyMs >= 0 ? QVariant(QString::number(e->latencyMs, 'f', 1)) : QVariant();
        case ColRequest: return e->requestId;
        case ColDetail: return e->detail;
      }
      break;
    case Qt::DecorationRole:
      if (index.column() == ColOutcome) return outcomeStyle(e->outcome).color;
      break;
    case Qt::ToolTipRole: return describe(index.row());
    case AtMsRole: return e->at.toMSecsSinceEpoch();
    case OutcomeRole: return e->outcome;
    default: break;
  }
  return {};
}

QVariant EventModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case ColAt: return tr("At");
    case ColOutcome: return tr("Outcome");
    case ColGeneration: return tr("Gen");
    case ColStatus: return tr("Status");
    case ColLatency: return tr("Latency ms");
    case ColRequest: return tr("Request");
    case ColDetail: return tr("Detail");
    default: return {};
  }
}

}  // namespace idem::ui
