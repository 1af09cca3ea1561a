#include "ui/trace/eventmodel.h"

#include "ui/common/outcomestyle.h"
#include "ui/common/timefmt.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

EventModel::EventModel(QObject* parent) : QAbstractTableModel(parent) {}

void EventModel::setDetail(SharedKeyDetail detail) {
  beginResetModel();
  m_detail = std::move(detail);
  endResetModel();
}

void EventModel::clear() { setDetail(noKeyDetail()); }

const explain::Event* EventModel::eventAt(int row) const {
  return (row >= 0 && row < rowCount()) ? &m_detail->events()[static_cast<std::size_t>(row)] : nullptr;
}

int EventModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_detail->events().size());
}
int EventModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

Qt::ItemFlags EventModel::flags(const QModelIndex& index) const {
  return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren : Qt::NoItemFlags;
}

QString EventModel::describe(int row) const {
  const explain::Event* e = eventAt(row);
  if (!e) return {};
  const QDateTime at = toDateTime(e->at);
  QString text = outcomeStyle(e->outcome).label % u"\n"_s % formatAbsolute(at) % u" ("_s %
                 formatRelative(at, m_detail->serverNow()) % u")"_s;
  if (e->generation) text += u"\n"_s % tr("generation %1").arg(*e->generation);
  if (e->status) text += u"\n"_s % tr("status %1").arg(*e->status);
  const bool folded = e->repeats > 1;
  if (folded)
    text += u"\n"_s % tr("%1 identical decisions until %2, folded into one trace row (a retry storm)")
                          .arg(e->repeats)
                          .arg(formatAbsolute(toDateTime(e->lastAt)));
  if (e->latencyMs)
    text += u"\n"_s % (folded ? tr("slowest %1 ms") : tr("latency %1 ms")).arg(*e->latencyMs, 0, 'f', 1);
  if (e->requestId && !e->requestId->empty())
    text += u"\n"_s % (folded ? tr("last request %1") : tr("request %1")).arg(QString::fromStdString(*e->requestId));
  if (!e->fingerprintHex.empty())
    text += u"\n"_s % tr("fingerprint %1…").arg(QString::fromStdString(e->fingerprintHex.substr(0, 16)));
  if (e->detail && !e->detail->empty()) text += u"\n"_s % QString::fromStdString(*e->detail);
  return text;
}

QVariant EventModel::data(const QModelIndex& index, int role) const {
  const explain::Event* e = index.isValid() ? eventAt(index.row()) : nullptr;
  if (!e || index.column() >= ColumnCount) return {};
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case ColAt: return formatAbsolute(toDateTime(e->at));
        case ColOutcome:
          return e->repeats > 1 ? tr("%1 ×%2").arg(outcomeStyle(e->outcome).label).arg(e->repeats)
                                : outcomeStyle(e->outcome).label;
        case ColGeneration: return e->generation ? QVariant(*e->generation) : QVariant();
        case ColStatus: return e->status ? QVariant(*e->status) : QVariant();
        case ColLatency: return e->latencyMs ? QVariant(QString::number(*e->latencyMs, 'f', 1)) : QVariant();
        case ColRequest: return QString::fromStdString(e->requestId.value_or(""));
        case ColDetail: {
          // A duplicate across keys names the earlier key it repeats, whatever its detail says.
          const QString detail = QString::fromStdString(e->detail.value_or(""));
          if (!e->relatedKey) return detail;
          const QString related = tr("repeats key %1").arg(QString::fromStdString(*e->relatedKey));
          return detail.isEmpty() ? related : QString(related % u" · "_s % detail);
        }
      }
      break;
    case Qt::DecorationRole:
      if (index.column() == ColOutcome) return outcomeStyle(e->outcome).color;
      break;
    case Qt::ToolTipRole: return describe(index.row());
    case AtMsRole: return QVariant::fromValue<qint64>(e->at.micros / 1000);
    case OutcomeRole: return QString::fromStdString(e->outcome);
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
