#include "ui/sim/livecomparisonmodel.h"

#include <QBrush>
#include <QLocale>
#include <cmath>

#include "ui/sim/comparisonmodel.h"

using namespace Qt::StringLiterals;

namespace idem::ui::sim {
namespace {

double perOp(std::int64_t count, const idem::sim::Result& r) {
  return r.operations ? static_cast<double>(count) / static_cast<double>(r.operations) : 0;
}

}  // namespace

LiveComparisonModel::LiveComparisonModel(QObject* parent) : QAbstractTableModel(parent) {}

void LiveComparisonModel::setLive(const LiveResult& live) {
  m_live = live;
  emit dataChanged(index(0, 0), index(RowCount - 1, ColumnCount - 1));
}

void LiveComparisonModel::setPrediction(const ResultPtr& prediction) {
  m_model = prediction;
  emit dataChanged(index(0, 0), index(RowCount - 1, ColumnCount - 1));
}

void LiveComparisonModel::clear() {
  beginResetModel();
  m_live.reset();
  m_model.reset();
  endResetModel();
}

std::optional<double> LiveComparisonModel::liveValue(const LiveResult& l, Row row) {
  switch (row) {
    case Operations:
      return double(l.operations);
    case Attempts:
      return double(l.attempts);
    case Amplification:
      return l.amplification();
    case SuccessRate:
      return l.successRate();
    case Conflicts409:
      return double(l.conflicts409);
    case Status503:
      return double(l.status503);
    case Timeouts:
      return double(l.timeouts);
    case Executions:
      return double(l.executions);
    case Duplicates:
      return double(l.duplicates);
    case RowCount:
      break;
  }
  return std::nullopt;
}

std::optional<std::pair<double, double>> LiveComparisonModel::expected(const idem::sim::Result& r, Row row, double n) {
  if (n <= 0 || r.operations == 0) return std::nullopt;
  auto poisson = [n](double rate) { return std::pair{rate * n, std::sqrt(std::max(rate * n, 1.0))}; };
  switch (row) {
    case Operations:
      return std::pair{n, 0.0};
    case Attempts:
    case Amplification: {
      // Attempts per operation A: P(A ≥ k) = (operations that sent attempt k) ÷ operations,
      // so E[A²] = Σ (2k − 1) P(A ≥ k); the spread of a mean over n operations is σ/√n.
      double mean = 1;
      double second = 1;
      for (const auto& o : r.offsets) {
        const double share = perOp(o.count, r);
        mean += share;
        second += (2.0 * o.attempt - 1.0) * share;
      }
      const double sd = std::sqrt(std::max(0.0, second - mean * mean));
      if (row == Attempts) return std::pair{mean * n, sd * std::sqrt(n)};
      return std::pair{r.amplification(), sd / std::sqrt(n)};
    }
    case SuccessRate: {
      const double p = r.successRate();
      return std::pair{p, std::sqrt(std::max(p * (1 - p), 0.25 / n) / n)};
    }
    case Conflicts409:
      return poisson(perOp(r.conflicts409, r));
    case Status503:
      return poisson(perOp(r.status503, r));
    case Timeouts:
      return poisson(perOp(r.timeouts, r));
    case Executions: {
      const double rate = perOp(r.executions, r);
      const double p = std::min(rate, 1.0);
      return std::pair{rate * n, std::sqrt(std::max(n * p * (1 - p), 1.0))};
    }
    case Duplicates:
      return poisson(perOp(r.duplicates, r));
    case RowCount:
      break;
  }
  return std::nullopt;
}

std::optional<double> LiveComparisonModel::deviation(Row row) const {
  if (!m_live || !m_model || row == Operations) return std::nullopt;
  const auto live = liveValue(*m_live, row);
  const auto e = expected(*m_model, row, static_cast<double>(m_live->operations));
  if (!live || !e) return std::nullopt;
  const double diff = std::abs(*live - e->first);
  return e->second > 0 ? diff / e->second : (diff < 1e-9 ? 0 : 1e9);
}

int LiveComparisonModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : RowCount; }
int LiveComparisonModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant LiveComparisonModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
  const auto row = static_cast<Row>(index.row());
  auto show = [row](double v) {
    if (row == Amplification) return formatRatio(v);
    if (row == SuccessRate) return formatPercent(v);
    return QLocale().toString(v, 'f', row == Operations ? 0 : (std::abs(v - std::round(v)) < 1e-9 ? 0 : 1));
  };
  switch (index.column()) {
    case Live: {
      if (!m_live) return {};
      const auto v = liveValue(*m_live, row);
      if (role == ValueRole) return v ? QVariant(*v) : QVariant();
      if (role == Qt::DisplayRole) return v ? show(*v) : QString();
      if (role == Qt::ForegroundRole && row == Duplicates && v && *v > 0) return QBrush(QColor(0xc0, 0x1c, 0x8c));
      break;
    }
    case Model: {
      if (!m_model) return {};
      const double n = m_live ? static_cast<double>(m_live->operations) : 0;
      const auto e = expected(*m_model, row, n > 0 ? n : static_cast<double>(m_model->operations));
      if (role == ValueRole) return e ? QVariant(e->first) : QVariant();
      if (role == Qt::DisplayRole) {
        if (!e) return QString();
        if (row == Operations) return tr("%1 (scaled from %2)").arg(show(e->first), formatCount(m_model->operations));
        return e->second > 0 ? tr("%1 ± %2").arg(show(e->first), show(3 * e->second)) : show(e->first);
      }
      break;
    }
    case Agreement: {
      const auto d = deviation(row);
      if (role == ValueRole) return d ? QVariant(*d) : QVariant();
      if (role == Qt::DisplayRole) {
        if (!d) return QString();
        return *d <= 3 ? tr("✓ within noise (%1σ)").arg(*d, 0, 'f', 1) : tr("✗ off by %1σ").arg(*d, 0, 'f', 1);
      }
      if (role == Qt::ForegroundRole && d) return QBrush(*d <= 3 ? QColor(0x2e, 0x8b, 0x3e) : QColor(0xc0, 0x30, 0x30));
      break;
    }
    default:
      break;
  }
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant LiveComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || section < 0) return {};
  if (orientation == Qt::Horizontal) {
    switch (section) {
      case Live:
        return tr("Live (endpoint)");
      case Model:
        return tr("Model prediction ± 3σ");
      case Agreement:
        return tr("Agreement");
      default:
        return {};
    }
  }
  switch (static_cast<Row>(section)) {
    case Operations:
      return tr("Operations");
    case Attempts:
      return tr("Attempts");
    case Amplification:
      return tr("Amplification");
    case SuccessRate:
      return tr("Success rate");
    case Conflicts409:
      return tr("409 answers");
    case Status503:
      return tr("503 answers (Sim-Fail)");
    case Timeouts:
      return tr("Client timeouts");
    case Executions:
      return tr("Executions (ledger rows)");
    case Duplicates:
      return tr("Duplicates (extra ledger rows)");
    case RowCount:
      break;
  }
  return {};
}

}  // namespace idem::ui::sim
