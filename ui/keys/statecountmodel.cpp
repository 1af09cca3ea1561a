#include "ui/keys/statecountmodel.h"

#include <QColor>
#include <QLocale>

#include "ui/common/dbsession.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {
constexpr KeyState kStates[] = {KeyState::All, KeyState::Processing, KeyState::Done, KeyState::Expired,
                                KeyState::Archived};
constexpr int kRows = 5;
}  // namespace

StateCountModel::StateCountModel(DbSession* session, QObject* parent) : QAbstractTableModel(parent), m_session(session) {}

KeyState StateCountModel::stateAt(int row) { return (row >= 0 && row < kRows) ? kStates[row] : KeyState::All; }

int StateCountModel::rowOf(KeyState state) {
  for (int i = 0; i < kRows; ++i)
    if (kStates[i] == state) return i;
  return 0;
}

void StateCountModel::refresh() {
  const quint64 generation = ++m_generation;
  m_session->submit<StateCounts>(
      this, [](pg::Connection& conn) { return fetchStateCounts(conn); },
      [this, generation](DbResult<StateCounts> result) {
        if (generation != m_generation || !result.ok()) return;
        m_counts = *result.value;
        m_loaded = true;
        emit dataChanged(index(0, ColCount), index(kRows - 1, ColCount));
        emit countsLoaded();
      });
}

int StateCountModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kRows; }
int StateCountModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

Qt::ItemFlags StateCountModel::flags(const QModelIndex& index) const {
  return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren : Qt::NoItemFlags;
}

QString StateCountModel::formatCount(qint64 n, bool estimated) {
  QString text;
  if (n >= 1'000'000)
    text = QString::number(static_cast<double>(n) / 1e6, 'f', 1) % u" M"_s;
  else if (n >= 10'000)
    text = QString::number(static_cast<double>(n) / 1e3, 'f', n >= 100'000 ? 0 : 1) % u" k"_s;
  else
    text = QString::number(n);
  return estimated ? u"≈ "_s % text : text;
}

QVariant StateCountModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= kRows || index.column() >= ColumnCount) return {};
  const KeyState state = kStates[index.row()];
  if (role == StateRole) return static_cast<int>(state);
  if (role == Qt::DisplayRole && index.column() == ColName) {
    switch (state) {
      case KeyState::All: return tr("All live keys");
      case KeyState::Processing: return tr("Processing");
      case KeyState::Done: return tr("Done");
      case KeyState::Expired: return tr("Expired, awaiting sweep");
      case KeyState::Archived: return tr("Archived");
    }
  }
  if (role == Qt::DisplayRole && index.column() == ColCount) {
    if (!m_loaded) return u"…"_s;
    const auto& c = m_counts;
    switch (state) {
      case KeyState::All: return formatCount(c.processing + c.done + c.expired, c.doneEstimated);
      case KeyState::Processing: return formatCount(c.processing, false);
      case KeyState::Done: return formatCount(c.done, c.doneEstimated);
      case KeyState::Expired: return formatCount(c.expired, false);
      case KeyState::Archived: return formatCount(c.archived, c.archivedEstimated);
    }
  }
  if (role == Qt::ToolTipRole) {
    switch (state) {
      case KeyState::All: return tr("Every live key (not archived)");
      case KeyState::Processing: return tr("Claimed, executing, not past expiry. %1 have an expired lease (stuck).")
                                     .arg(QLocale().toString(m_counts.stuck));
      case KeyState::Done: return tr("Response stored and replayed on retries, not past expiry");
      case KeyState::Expired: return tr("Past expires_at; the sweeper archives them");
      case KeyState::Archived: return tr("Earlier generations kept for audit (idem.key_archive)");
    }
  }
  if (role == Qt::TextAlignmentRole && index.column() == ColCount)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && index.column() == ColCount) return QColor(0x66, 0x66, 0x66);
  return {};
}

}  // namespace idem::ui
