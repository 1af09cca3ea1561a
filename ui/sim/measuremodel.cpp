#include "ui/sim/measuremodel.h"

#include <QColor>
#include <algorithm>

using namespace Qt::StringLiterals;
namespace measure = idem::measure;

namespace idem::ui::sim {
namespace {

QString seconds(double s) { return QString::number(s, 'f', 3); }

QVariantList spreadValue(const measure::Spread& s) { return {s.min, s.p50, s.max}; }

QString count(double n) { return QString::number(n, 'g', 6); }

// A fact that makes the client unsafe to retry with: shown in the simulator's duplicate colour.
const QColor kBad(0xc0, 0x1c, 0x8c);

}  // namespace

MeasureModel::MeasureModel(QObject* parent) : QAbstractTableModel(parent) {}

void MeasureModel::setReports(std::vector<measure::ClientReport> reports) {
  beginResetModel();
  m_reports = std::move(reports);
  m_rows.clear();
  m_retries = 0;
  for (std::size_t c = 0; c < m_reports.size(); ++c)
    for (std::size_t f = 0; f < m_reports[c].faults.size(); ++f) {
      m_rows.push_back({static_cast<int>(c), static_cast<int>(f)});
      m_retries = std::max(m_retries, static_cast<int>(m_reports[c].faults[f].retries.size()));
    }
  endResetModel();
}

void MeasureModel::clear() { setReports({}); }

int MeasureModel::clientOfRow(int row) const {
  return row >= 0 && row < static_cast<int>(m_rows.size()) ? m_rows[static_cast<std::size_t>(row)].client : -1;
}

int MeasureModel::firstRowOf(int client) const {
  for (std::size_t r = 0; r < m_rows.size(); ++r)
    if (m_rows[r].client == client) return static_cast<int>(r);
  return -1;
}

int MeasureModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int MeasureModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : FirstRetryColumn + m_retries;
}

QString MeasureModel::clientName(const measure::ClientReport& client) {
  return client.userAgent.empty() ? tr("(no User-Agent)") : QString::fromStdString(client.userAgent);
}

QString MeasureModel::spreadText(const measure::Spread& s) {
  return seconds(s.min) % u" / "_s % seconds(s.p50) % u" / "_s % seconds(s.max);
}

QVariant MeasureModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= static_cast<int>(m_rows.size())) return {};
  const Row& row = m_rows[static_cast<std::size_t>(index.row())];
  const auto& client = m_reports[static_cast<std::size_t>(row.client)];
  const auto& fault = client.faults[static_cast<std::size_t>(row.fault)];
  switch (role) {
    case Qt::DisplayRole:
      return display(client, fault, index.column(), row.fault == 0);
    case ValueRole:
      return value(fault, index.column(), row.client);
    case Qt::ToolTipRole:
      return index.column() == ClientColumn ? clientName(client) : toolTip(fault, index.column());
    case Qt::ForegroundRole:
      if (index.column() == KeyColumn && fault.sameKey && !*fault.sameKey) return kBad;
      if (index.column() == RetryAfterColumn && fault.retryAfterHonoured && !*fault.retryAfterHonoured) return kBad;
      return {};
    case Qt::TextAlignmentRole:
      return index.column() >= OperationsColumn && index.column() != KeyColumn && index.column() != RetryAfterColumn
                 ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                 : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    default:
      return {};
  }
}

QVariant MeasureModel::display(const measure::ClientReport& c, const measure::FaultReport& f, int column,
                               bool firstOfClient) const {
  switch (column) {
    case ClientColumn:
      // Once per client: the rows below it are the same client's other faults.
      return firstOfClient ? clientName(c) : QString();
    case FaultColumn:
      return QString::fromStdString(f.profile);
    case OperationsColumn:
      return f.operations;
    case AttemptsColumn:
      return f.attempts.min == f.attempts.max
                 ? count(f.attempts.min)
                 : count(f.attempts.min) % u" / "_s % count(f.attempts.p50) % u" / "_s % count(f.attempts.max);
    case KeyColumn:
      // Short here; the tooltip has `idemctl measure`'s words.
      if (!f.keySent) return tr("not sent");
      if (!f.sameKey) return tr("sent (no op-<id>)");
      return *f.sameKey ? tr("kept") : tr("CHANGED");
    case RetryAfterColumn:
      if (!f.retryAfter) return tr("—");
      return tr("%1 s %2").arg(seconds(*f.retryAfter), !f.retryAfterHonoured   ? tr("(no retry)")
                                                       : *f.retryAfterHonoured ? tr("honoured")
                                                                               : tr("NOT honoured"));
    case TimeoutColumn:
      // The median only (the spread is in the tooltip): it is the client's timeout setting.
      return f.attemptLength ? seconds(f.attemptLength->p50) : tr("—");
    default: {
      const auto n = static_cast<std::size_t>(column - FirstRetryColumn);
      return n < f.retries.size() ? spreadText(f.retries[n].gap) : QString();
    }
  }
}

QVariant MeasureModel::value(const measure::FaultReport& f, int column, int client) const {
  switch (column) {
    case ClientColumn:
      return client;
    case FaultColumn:
      return QString::fromStdString(f.profile);
    case OperationsColumn:
      return f.operations;
    case AttemptsColumn:
      return spreadValue(f.attempts);
    case KeyColumn:
      return f.sameKey ? QVariant(*f.sameKey) : QVariant();
    case RetryAfterColumn:
      return f.retryAfterHonoured ? QVariant(*f.retryAfterHonoured) : QVariant();
    case TimeoutColumn:
      return f.attemptLength ? QVariant(spreadValue(*f.attemptLength)) : QVariant();
    default: {
      const auto n = static_cast<std::size_t>(column - FirstRetryColumn);
      return n < f.retries.size() ? QVariant(spreadValue(f.retries[n].gap)) : QVariant();
    }
  }
}

QString MeasureModel::toolTip(const measure::FaultReport& f, int column) {
  if (column == KeyColumn) {
    if (!f.keySent) return tr("No attempt carried an Idempotency-Key");
    if (!f.sameKey)
      return tr("Sent, but whether retries kept it is unknown: the route did not name the operation (op-<id>)");
    return *f.sameKey ? tr("Kept across retries: every retry carried its first attempt's key")
                      : tr("CHANGED between retries: a retry carried a new key, so the store cannot tell it is the "
                           "same operation");
  }
  if (column < FirstRetryColumn) {
    if (column == TimeoutColumn && f.attemptLength)
      return tr("How long the client waited on a first attempt that got no answer (its timeout), min / p50 / max "
                "seconds: %1")
          .arg(spreadText(*f.attemptLength));
    return {};
  }
  const auto n = static_cast<std::size_t>(column - FirstRetryColumn);
  if (n >= f.retries.size()) return {};
  const auto& r = f.retries[n];
  return tr("Retry %1 (attempt %2), %3 operation(s), min / p50 / max seconds:\n"
            "gap (arrival to arrival) %4\n"
            "sleep (previous attempt's end to this arrival) %5\n"
            "offset (first attempt's arrival to this one) %6")
      .arg(r.retry)
      .arg(r.retry + 1)
      .arg(r.gap.samples)
      .arg(spreadText(r.gap), spreadText(r.sleep), spreadText(r.offset));
}

QVariant MeasureModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case AttemptsColumn:
        return tr("Attempts per operation: one number when every operation made as many, else min / p50 / max");
      case OperationsColumn:
        return tr("Operations measured: each one's attempts are grouped by its op-<id> (else its key)");
      case KeyColumn:
        return tr(
            "Whether every retry carried the first attempt's Idempotency-Key (known when the route names "
            "the operation with op-<id>)");
      case RetryAfterColumn:
        return tr("The Retry-After the profile sent, and whether every sleep after it lasted at least that long");
      case TimeoutColumn:
        return tr(
            "hang profile: how long the client waited before giving up on an attempt (median seconds; hover a "
            "cell for min / p50 / max)");
      default:
        return section >= FirstRetryColumn
                   ? tr("Time between the arrival of attempt %1 and of attempt %2, over the "
                        "operations: min / p50 / max seconds. Hover a cell for sleeps and offsets.")
                         .arg(section - FirstRetryColumn + 1)
                         .arg(section - FirstRetryColumn + 2)
                   : QVariant();
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case ClientColumn:
      return tr("Client (User-Agent)");
    case FaultColumn:
      return tr("Fault");
    case OperationsColumn:
      return tr("Ops");
    case AttemptsColumn:
      return tr("Attempts / op");
    case KeyColumn:
      return tr("Key");
    case RetryAfterColumn:
      return tr("Retry-After");
    case TimeoutColumn:
      return tr("Timeout (hang), s");
    default:
      return tr("Retry %1 gap, s").arg(section - FirstRetryColumn + 1);
  }
}

}  // namespace idem::ui::sim
