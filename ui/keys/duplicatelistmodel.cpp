#include "ui/keys/duplicatelistmodel.h"

#include <QColor>

#include "ui/common/dbsession.h"
#include "ui/common/outcomestyle.h"
#include "ui/common/timefmt.h"
#include "ui/common/timezonesetting.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

DuplicateListModel::DuplicateListModel(DbSession* session, QObject* parent)
    : QAbstractTableModel(parent), m_session(session) {
  TimeZoneSetting::refreshOnChange(this);
}

void DuplicateListModel::setFilter(const KeyFilter& filter) {
  m_filter = filter;
  refresh();
}

void DuplicateListModel::refresh() {
  ++m_generation;
  if (m_loading) m_session->cancel(m_ticket);
  beginResetModel();
  m_rows.clear();
  m_hasMore = false;
  endResetModel();
  request(true);
}

const DuplicatePair* DuplicateListModel::pairAt(int row) const {
  return row >= 0 && row < rowCount() ? &m_rows[static_cast<std::size_t>(row)] : nullptr;
}

int DuplicateListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int DuplicateListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

bool DuplicateListModel::canFetchMore(const QModelIndex& parent) const {
  return !parent.isValid() && m_hasMore && !m_loading && rowCount() < m_capacity;
}

void DuplicateListModel::fetchMore(const QModelIndex& parent) {
  if (canFetchMore(parent)) request(false);
}

void DuplicateListModel::setLoading(bool loading) {
  if (m_loading == loading) return;
  m_loading = loading;
  emit loadingChanged(loading);
}

void DuplicateListModel::request(bool first) {
  std::optional<DuplicatePair> after;
  if (!first && !m_rows.empty()) after = m_rows.back();
  setLoading(true);
  const quint64 generation = m_generation;
  const KeyFilter filter = m_filter;
  const int limit = m_pageSize;
  m_ticket = m_session->submit<std::vector<DuplicatePair>>(
      this,
      [filter, after, limit](pg::Connection& conn) {
        return fetchDuplicatePage(conn, filter, after, limit + 1);  // one extra row tells "more"
      },
      [this, generation, first](DbResult<std::vector<DuplicatePair>> result) {
        if (generation != m_generation) return;  // a late answer to an earlier filter
        if (!result.ok()) {
          setLoading(false);
          emit loadFailed(result.error);
          return;
        }
        auto rows = std::move(*result.value);
        m_hasMore = static_cast<int>(rows.size()) > m_pageSize;
        if (m_hasMore) rows.pop_back();
        if (!rows.empty()) {
          beginInsertRows({}, rowCount(), rowCount() + static_cast<int>(rows.size()) - 1);
          m_rows.insert(m_rows.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
          endInsertRows();
        }
        m_loaded = true;
        setLoading(false);
        emit pageLoaded(static_cast<int>(rows.size()), first);
      });
}

QString DuplicateListModel::whatHappened(const QString& outcome) {
  if (outcome == u"duplicate_observed"_s) return tr("both ran (flagged)");
  if (outcome == u"duplicate_confirmed"_s) return tr("both ran (client confirmed)");
  if (outcome == u"duplicate_held"_s) return tr("held (409), ran once");
  if (outcome == u"duplicate_rejected"_s) return tr("refused (409), ran once");
  return outcome;  // a name a newer writer knows
}

QVariant DuplicateListModel::data(const QModelIndex& index, int role) const {
  const DuplicatePair* p = index.isValid() ? pairAt(index.row()) : nullptr;
  if (!p || index.column() >= ColumnCount) return {};
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case ColWhen: return formatAbsolute(p->at);
        case ColKey: return p->key;
        case ColEarlierKey: return p->earlierKey;
        case ColRoute:
          return p->service == u"default"_s ? p->endpoint : QString(p->service % u": "_s % p->endpoint);
        case ColTenant: return p->tenant;
        case ColGap: {
          const auto gap = p->gapMs();
          return gap ? tr("%1 later").arg(formatDuration(*gap)) : QVariant(u"—"_s);
        }
        case ColWhat: return whatHappened(p->outcome);
        case ColResources: {
          const QString earlier = p->earlierResource.isEmpty() ? u"—"_s : p->earlierResource;
          return p->laterResource.isEmpty() ? earlier : QString(earlier % u" → "_s % p->laterResource);
        }
      }
      break;
    case Qt::ToolTipRole:
      if (index.column() == ColWhat || index.column() == ColGap) return p->detail;
      if (index.column() == ColEarlierKey) return tr("Double-click to open the earlier key %1").arg(p->earlierKey);
      break;
    case Qt::ForegroundRole:
      // Both ran: the colour of a duplicate charge; stopped ones in the 409 colour.
      if (index.column() == ColWhat) {
        const bool ran = p->outcome == u"duplicate_observed"_s;
        return outcomeStyle(ran ? trace::Outcome::ExecutedAfterExpiry : trace::Outcome::Conflict).color;
      }
      break;
    default: break;
  }
  return {};
}

QVariant DuplicateListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case ColWhen: return tr("When");
    case ColKey: return tr("Key");
    case ColEarlierKey: return tr("Earlier key");
    case ColRoute: return tr("Route");
    case ColTenant: return tr("Tenant");
    case ColGap: return tr("Gap");
    case ColWhat: return tr("What happened");
    case ColResources: return tr("Resources (earlier → later)");
    default: return {};
  }
}

Qt::ItemFlags DuplicateListModel::flags(const QModelIndex& index) const {
  return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren : Qt::NoItemFlags;
}

}  // namespace idem::ui
