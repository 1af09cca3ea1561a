#include "ui/cases/caselistmodel.h"

#include "ui/common/timefmt.h"
#include "ui/common/timezonesetting.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

CaseListModel::CaseListModel(CaseBook* book, QObject* parent) : QAbstractTableModel(parent), m_book(book) {
  connect(book, &CaseBook::changed, this, &CaseListModel::reload);
  TimeZoneSetting::refreshOnChange(this);
  reload();
}

void CaseListModel::setFilterText(const QString& text) {
  m_filter = text;
  reload();
}

void CaseListModel::reload() {
  beginResetModel();
  m_cases = m_book->findCases(m_filter);
  endResetModel();
}

const CaseBook::Case* CaseListModel::caseAt(int row) const {
  return (row >= 0 && row < rowCount()) ? &m_cases[static_cast<std::size_t>(row)] : nullptr;
}

int CaseListModel::rowOf(qint64 id) const {
  for (std::size_t i = 0; i < m_cases.size(); ++i)
    if (m_cases[i].id == id) return static_cast<int>(i);
  return -1;
}

int CaseListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_cases.size());
}
int CaseListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant CaseListModel::data(const QModelIndex& index, int role) const {
  const CaseBook::Case* c = caseAt(index.row());
  if (!c || role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case ColTicket: return c->ticket;
    case ColUpdated: return formatAbsolute(c->updatedAt);
    case ColKeys: return static_cast<int>(c->keys.size());
    case ColExports: return static_cast<int>(c->exports.size());
    case ColNotes: return c->notes.section(u'\n', 0, 0);
    default: return {};
  }
}

QVariant CaseListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case ColTicket: return tr("Ticket");
    case ColUpdated: return tr("Last change");
    case ColKeys: return tr("Keys");
    case ColExports: return tr("Exports");
    case ColNotes: return tr("Notes");
    default: return {};
  }
}

}  // namespace idem::ui
