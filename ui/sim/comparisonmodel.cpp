#include "ui/sim/comparisonmodel.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <QLocale>
#include <cmath>

#include "core/sim/report.h"
#include "ui/common/timefmt.h"

using namespace Qt::StringLiterals;
namespace core = idem::sim;

namespace idem::ui::sim {

QString formatCount(qint64 n) { return QLocale().toString(n); }
QString formatRatio(double r) { return QLocale().toString(r, 'f', 3); }
QString formatPercent(double fraction) { return QLocale().toString(100 * fraction, 'f', 2) + u" %"_s; }
QString formatSeconds(double s) { return idem::ui::formatDuration(static_cast<qint64>(std::llround(s * 1000))); }

ComparisonModel::ComparisonModel(QObject* parent) : QAbstractTableModel(parent) {}

void ComparisonModel::setResult(int column, const ResultPtr& result, const QString& title) {
  if (column < 0 || column > 1) return;
  m_results.at(static_cast<std::size_t>(column)) = result;
  m_titles.at(static_cast<std::size_t>(column)) = title;
  emit dataChanged(index(0, column), index(RowCount - 1, column));
  emit headerDataChanged(Qt::Horizontal, column, column);
}

void ComparisonModel::clear() {
  beginResetModel();
  m_results = {};
  m_titles = {};
  endResetModel();
}

int ComparisonModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : RowCount; }
int ComparisonModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : 2; }

QString ComparisonModel::rowName(Row row) {
  switch (row) {
    case Operations:
      return tr("Operations");
    case Attempts:
      return tr("Attempts");
    case Amplification:
      return tr("Amplification (attempts ÷ operations)");
    case SuccessRate:
      return tr("Success rate");
    case Conflicts409:
      return tr("409 answers");
    case ServerErrors:
      return tr("500 / 503 answers");
    case Timeouts:
      return tr("Client timeouts");
    case BudgetRefused:
      return tr("Retries refused by the budget");
    case Executions:
      return tr("Executions");
    case Duplicates:
      return tr("Duplicates (executed twice)");
    case DuplicatesPerMillion:
      return tr("Duplicates per million operations");
    case DuplicatesAfterPurge:
      return tr("… after the key's TTL");
    case DuplicatesOther:
      return tr("… lease takeover or stored at completion");
    case DuplicatesNewKey:
      return tr("… a retry under a new key");
    case DuplicatesOtherWay:
      return tr("Duplicates with cross-key detection the other way");
    case NewKeyRetries:
      return tr("Retries sent under a new key");
    case HeldOrRejected:
      return tr("Held or refused as the same request");
    case MeantNeverRan:
      return tr("Meant repeats that never ran");
    case Horizon:
      return tr("Retry horizon H vs TTL + purge lag");
    case MaxQueueWait:
      return tr("Longest queue wait");
    case Recovery:
      return tr("Recovered after the event");
    case RowCount:
      break;
  }
  return {};
}

QVariant ComparisonModel::value(const core::Result& r, Row row) {
  switch (row) {
    case Operations:
      return QVariant::fromValue<double>(static_cast<double>(r.operations));
    case Attempts:
      return static_cast<double>(r.attempts);
    case Amplification:
      return r.amplification();
    case SuccessRate:
      return r.successRate();
    case Conflicts409:
      return static_cast<double>(r.conflicts409);
    case ServerErrors:
      return static_cast<double>(r.status500 + r.status503);
    case Timeouts:
      return static_cast<double>(r.timeouts);
    case BudgetRefused:
      return static_cast<double>(r.failures.budget);
    case Executions:
      return static_cast<double>(r.executions);
    case Duplicates:
      return static_cast<double>(r.duplicates);
    case DuplicatesPerMillion:
      return r.duplicatesPerMillion();
    case DuplicatesAfterPurge:
      return static_cast<double>(r.duplicatesAfterPurge);
    case DuplicatesOther:
      return static_cast<double>(r.duplicatesConcurrent + r.duplicatesLeaseTakeover);
    case DuplicatesNewKey:
      return static_cast<double>(r.duplicatesNewKey);
    case DuplicatesOtherWay:
      return r.counterpart ? QVariant(static_cast<double>(r.counterpart->duplicates)) : QVariant();
    case NewKeyRetries:
      return static_cast<double>(r.newKeyRetries);
    case HeldOrRejected:
      return static_cast<double>(r.crossKey.held + r.crossKey.rejected);
    case MeantNeverRan:
      return static_cast<double>(r.crossKey.legitimateRefused);
    case Horizon:
      return r.horizon.value ? QVariant(core::toSeconds(*r.horizon.value)) : QVariant();
    case MaxQueueWait:
      return core::toSeconds(r.maxQueueWait);
    case Recovery:
      return r.recovery && r.recovery->recoveredAfterS ? QVariant(*r.recovery->recoveredAfterS) : QVariant();
    case RowCount:
      break;
  }
  return {};
}

QString ComparisonModel::text(const core::Result& r, Row row) {
  const QVariant v = value(r, row);
  switch (row) {
    case Amplification:
      return formatRatio(v.toDouble());
    case SuccessRate:
      return formatPercent(v.toDouble());
    case DuplicatesPerMillion:
      return QLocale().toString(v.toDouble(), 'f', 1);
    case MaxQueueWait:
      return formatSeconds(v.toDouble());
    case Horizon: {
      const double ttl = core::toSeconds(r.config.store.ttl + r.config.store.purgeLag);
      const QString h = v.isNull() ? tr("unbounded") : formatSeconds(v.toDouble());
      return core::expiryDuplicatesPossible(r) ? tr("%1 ≥ %2: can charge twice").arg(h, formatSeconds(ttl))
                                               : tr("%1 < %2: cannot").arg(h, formatSeconds(ttl));
    }
    case DuplicatesOtherWay:
      if (!r.counterpart) return tr("no cause across keys");
      return r.counterpart->mode == core::CrossKey::Mode::Off
                 ? tr("%1 without detection").arg(formatCount(static_cast<qint64>(v.toDouble())))
                 : tr("%1 with hold").arg(formatCount(static_cast<qint64>(v.toDouble())));
    case Recovery:
      if (!r.recovery) return tr("no event");
      return v.isNull() ? tr("never (still collapsed)") : formatSeconds(v.toDouble());
    default:
      return formatCount(static_cast<qint64>(v.toDouble()));
  }
}

QVariant ComparisonModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const ResultPtr& r = m_results.at(static_cast<std::size_t>(index.column()));
  const auto row = static_cast<Row>(index.row());
  switch (role) {
    case Qt::DisplayRole:
      return r ? text(*r, row) : QString();
    case ValueRole:
      return r ? value(*r, row) : QVariant();
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole: {
      // Magenta is the colour of a duplicate charge everywhere in the console.
      const bool duplicateRow = row == Duplicates || row == DuplicatesPerMillion || row == DuplicatesAfterPurge ||
                                row == DuplicatesOther || row == DuplicatesNewKey || row == DuplicatesOtherWay ||
                                row == Horizon;
      if (r && duplicateRow && (row == Horizon ? core::expiryDuplicatesPossible(*r) : value(*r, row).toDouble() > 0))
        return QBrush(QColor(0xc0, 0x1c, 0x8c));
      return {};
    }
    case Qt::FontRole:
      if (row == Duplicates || row == DuplicatesPerMillion) {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
      return {};
    default:
      return {};
  }
}

QVariant ComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical)
    return section >= 0 && section < RowCount ? rowName(static_cast<Row>(section)) : QVariant();
  if (section < 0 || section > 1) return {};
  const QString letter = section == 0 ? u"A"_s : u"B"_s;
  const QString& t = m_titles.at(static_cast<std::size_t>(section));
  return t.isEmpty() ? letter : letter + u": "_s + t;
}

}  // namespace idem::ui::sim
