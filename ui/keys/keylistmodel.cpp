#include "ui/keys/keylistmodel.h"

#include <QColor>
#include <QTimer>

#include "ui/common/dbsession.h"
#include "ui/common/timefmt.h"
#include "ui/common/timezonesetting.h"
#include "ui/keys/keyquery.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

KeyListModel::KeyListModel(DbSession* session, QObject* parent)
    : QAbstractTableModel(parent), m_session(session), m_clock(new QTimer(this)) {
  m_clock->setInterval(30000);
  TimeZoneSetting::refreshOnChange(this);
  connect(m_clock, &QTimer::timeout, this, [this] {
    if (!m_rows.empty()) emit dataChanged(index(0, ColState), index(rowCount() - 1, ColExpires));
  });
  m_clock->start();
}

KeyListModel::~KeyListModel() = default;

void KeyListModel::setFilter(const KeyFilter& filter) {
  m_filter = filter;
  refresh();
}

void KeyListModel::refresh() {
  ++m_generation;  // every answer to an earlier question is now late
  if (m_loading) m_session->cancel(m_ticket);
  beginResetModel();
  m_rows.clear();
  m_hasMore = false;
  m_hasPrevious = false;
  endResetModel();
  request(Direction::First);
}

const KeyRow* KeyListModel::rowAt(int row) const {
  return (row >= 0 && row < rowCount()) ? &m_rows[static_cast<std::size_t>(row)] : nullptr;
}

int KeyListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int KeyListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

bool KeyListModel::canFetchMore(const QModelIndex& parent) const { return !parent.isValid() && m_hasMore && !m_loading; }

void KeyListModel::fetchMore(const QModelIndex& parent) {
  if (canFetchMore(parent)) request(Direction::Forward);
}

void KeyListModel::fetchPrevious() {
  if (canFetchPrevious()) request(Direction::Backward);
}

void KeyListModel::setLoading(bool loading) {
  if (m_loading == loading) return;
  m_loading = loading;
  emit loadingChanged(loading);
}

void KeyListModel::request(Direction direction) {
  std::optional<KeyCursor> from;
  if (direction == Direction::Forward && !m_rows.empty()) from = KeyCursor::of(m_rows.back());
  if (direction == Direction::Backward && !m_rows.empty()) from = KeyCursor::of(m_rows.front());
  setLoading(true);
  const quint64 generation = m_generation;
  const KeyFilter filter = m_filter;
  const int limit = m_pageSize;
  const bool backward = direction == Direction::Backward;
  m_ticket = m_session->submit<std::vector<KeyRow>>(
      this,
      [filter, from, backward, limit](pg::Connection& conn) {
        return fetchKeyPage(conn, filter, from, backward, limit + 1);  // one extra row tells "more"
      },
      [this, generation, direction](DbResult<std::vector<KeyRow>> result) {
        if (generation != m_generation) return;  // a late answer to an earlier filter
        if (!result.ok()) {
          setLoading(false);
          emit loadFailed(result.error);
          return;
        }
        // Still "loading" while rows go in: a fetchMore from a rowsAboutToBeInserted
        // handler would otherwise page from the old last row and repeat this page.
        apply(direction, std::move(*result.value));
        setLoading(false);
      });
}

void KeyListModel::setStale(bool stale) {
  if (m_stale == stale) return;
  m_stale = stale;
  if (stale)
    m_clock->stop();
  else
    m_clock->start();
  if (!m_rows.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

void KeyListModel::apply(Direction direction, std::vector<KeyRow> rows) {
  m_loadedAt = m_session->serverNow();
  const bool more = static_cast<int>(rows.size()) > m_pageSize;
  if (more) {
    // The extra row is the one past the page, at the end in fetch order.
    if (direction == Direction::Backward)
      rows.erase(rows.begin());
    else
      rows.pop_back();
  }
  const int n = static_cast<int>(rows.size());
  if (direction == Direction::Backward) {
    m_hasPrevious = more;
    if (n > 0) {
      beginInsertRows({}, 0, n - 1);
      m_rows.insert(m_rows.begin(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
      endInsertRows();
      emit windowShiftedAtTop(n);
    }
    if (const int excess = rowCount() - m_capacity; excess > 0) {
      beginRemoveRows({}, rowCount() - excess, rowCount() - 1);
      m_rows.erase(m_rows.end() - excess, m_rows.end());
      endRemoveRows();
      m_hasMore = true;
    }
  } else {
    m_hasMore = more;
    if (n > 0) {
      beginInsertRows({}, rowCount(), rowCount() + n - 1);
      m_rows.insert(m_rows.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
      endInsertRows();
    }
    if (const int excess = rowCount() - m_capacity; excess > 0) {
      beginRemoveRows({}, 0, excess - 1);
      m_rows.erase(m_rows.begin(), m_rows.begin() + excess);
      endRemoveRows();
      m_hasPrevious = true;
      emit windowShiftedAtTop(-excess);
    }
  }
  emit pageLoaded(n, direction == Direction::First);
}

QString KeyListModel::stateText(const KeyRow& row) const {
  if (row.archived) return tr("archived (%1)").arg(row.state);
  const QDateTime now = m_stale ? m_loadedAt : m_session->serverNow();
  if (row.expires.isValid() && row.expires < now) return tr("%1 · expired").arg(row.state);
  if (row.state == u"processing"_s && row.leaseUntil.isValid() && row.leaseUntil < now)
    return tr("processing · lease expired");
  return row.state;
}

QVariant KeyListModel::data(const QModelIndex& index, int role) const {
  const KeyRow* row = index.isValid() ? rowAt(index.row()) : nullptr;
  if (!row || index.column() >= ColumnCount) return {};
  // Stale rows are judged at the moment they were read, and their times do not count on.
  const QDateTime now = m_stale ? m_loadedAt : m_session->serverNow();
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case ColKey: return row->key;
        // Services sharing the store may hold the same scope: a service other than "default" is named.
        case ColScope:
          return row->service.isEmpty() || row->service == u"default"_s
                     ? QString(row->tenant % u" "_s % row->endpoint)
                     : QString(row->service % u": "_s % row->tenant % u" "_s % row->endpoint);
        case ColGeneration: return row->generation;
        case ColState: return stateText(*row);
        case ColStatus: return row->status ? QVariant(row->status) : QVariant(u"—"_s);
        case ColResource: return row->resourceRef;
        case ColCreated: return formatAbsolute(row->created);
        case ColExpires:
          if (m_stale) return row->archived ? tr("archived %1").arg(formatAbsolute(row->archivedAt)) : formatAbsolute(row->expires);
          return row->archived ? tr("archived %1").arg(formatRelative(row->archivedAt, now))
                               : formatRelative(row->expires, now);
      }
      break;
    case Qt::ToolTipRole:
      switch (index.column()) {
        case ColCreated: return formatRelative(row->created, now);
        case ColExpires: return QString(formatAbsolute(row->expires) % u"\n"_s % formatExpiry(row->expires, now));
        case ColKey: return row->key;
        default: break;
      }
      break;
    case Qt::ForegroundRole:
      if (index.column() == ColStatus && row->status >= 500) return QColor(0xd0, 0x31, 0x2d);
      if (index.column() == ColExpires && !row->archived && row->expires < now) return QColor(0x99, 0x99, 0x99);
      break;
    case Qt::TextAlignmentRole:
      if (index.column() == ColGeneration || index.column() == ColStatus)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
      break;
    default: break;
  }
  return {};
}

QVariant KeyListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case ColKey: return tr("Key");
    case ColScope: return tr("Scope");
    case ColGeneration: return tr("Gen");
    case ColState: return tr("State");
    case ColStatus: return tr("Status");
    case ColResource: return tr("Resource");
    case ColCreated: return tr("Created");
    case ColExpires: return tr("Expires");
    default: return {};
  }
}

Qt::ItemFlags KeyListModel::flags(const QModelIndex& index) const {
  return index.isValid() ? Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren : Qt::NoItemFlags;
}

int KeyListModel::columnOf(SortColumn sort) {
  switch (sort) {
    case SortColumn::Key: return ColKey;
    case SortColumn::Scope: return ColScope;
    case SortColumn::Generation: return ColGeneration;
    case SortColumn::State: return ColState;
    case SortColumn::Status: return ColStatus;
    case SortColumn::Created: return ColCreated;
    case SortColumn::Expires: return ColExpires;
  }
  return -1;
}

void KeyListModel::sort(int column, Qt::SortOrder order) {
  static constexpr SortColumn kByColumn[] = {SortColumn::Key,    SortColumn::Scope,   SortColumn::Generation,
                                             SortColumn::State,  SortColumn::Status,  SortColumn::Key,
                                             SortColumn::Created, SortColumn::Expires};
  if (column < 0 || column >= ColumnCount || column == ColResource) return;  // no index for resource order
  KeyFilter f = m_filter;
  f.sort = kByColumn[column];
  f.descending = order == Qt::DescendingOrder;
  if (f == m_filter) return;
  setFilter(f);
}

}  // namespace idem::ui
