#pragma once
// The key table's model: a bounded window of rows over the filter's result, filled page by
// page on the session's worker thread by keyset paging. Scrolling down appends a page and
// drops rows off the top once the window is full; scrolling back up fetches them again.
// Answers to questions no longer asked (older filter, older refresh) are dropped by a
// generation counter, as DB Browser for SQLite's row cache does.
#include <QAbstractTableModel>
#include <deque>

#include "ui/common/dbresult.h"
#include "ui/keys/keyfilter.h"

class QTimer;

namespace idem::ui {

class DbSession;

class KeyListModel final : public QAbstractTableModel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(KeyListModel)

 public:
  enum Column { ColKey, ColScope, ColGeneration, ColState, ColStatus, ColResource, ColCreated, ColExpires, ColumnCount };

  explicit KeyListModel(DbSession* session, QObject* parent = nullptr);
  ~KeyListModel() override;

  /// Replaces the filter and loads its first page.
  void setFilter(const KeyFilter& filter);
  [[nodiscard]] const KeyFilter& filter() const { return m_filter; }
  /// Reloads the first page of the current filter.
  void refresh();

  void setPageSize(int rows) { m_pageSize = rows; }
  void setCapacity(int rows) { m_capacity = rows; }
  [[nodiscard]] int capacity() const { return m_capacity; }
  [[nodiscard]] bool isLoading() const { return m_loading; }
  /// The store was lost (true) or is back (false). While stale, times read absolute: a
  /// relative "in 23 h" that keeps counting pretends the row is still what the store holds.
  void setStale(bool stale);
  [[nodiscard]] bool isStale() const { return m_stale; }
  /// When the rows shown were read (the server's clock); invalid before the first page.
  [[nodiscard]] const QDateTime& loadedAt() const { return m_loadedAt; }
  [[nodiscard]] const KeyRow* rowAt(int row) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;
  void sort(int column, Qt::SortOrder order) override;
  [[nodiscard]] bool canFetchMore(const QModelIndex& parent) const override;
  void fetchMore(const QModelIndex& parent) override;
  /// True when rows before the window's first row were dropped and can be fetched again.
  [[nodiscard]] bool canFetchPrevious() const { return m_hasPrevious && !m_loading; }
  void fetchPrevious();

  /// The column a sort enum shows in, or -1.
  [[nodiscard]] static int columnOf(SortColumn sort);

 signals:
  void loadingChanged(bool loading);
  void loadFailed(const idem::ui::DbError& error);
  /// A page arrived; firstPage is true for the first page of a filter or refresh.
  void pageLoaded(int rows, bool firstPage);
  /// Rows were inserted (delta > 0) or removed (delta < 0) above the old first row, so a
  /// view can keep what the user looks at in place.
  void windowShiftedAtTop(int delta);

 private:
  enum class Direction { First, Forward, Backward };
  void request(Direction direction);
  void apply(Direction direction, std::vector<KeyRow> rows);
  void setLoading(bool loading);
  [[nodiscard]] QString stateText(const KeyRow& row) const;

  DbSession* m_session;
  KeyFilter m_filter;
  std::deque<KeyRow> m_rows;
  int m_pageSize = 200;
  int m_capacity = 2000;
  bool m_hasMore = false;
  bool m_hasPrevious = false;
  bool m_loading = false;
  bool m_stale = false;
  QDateTime m_loadedAt;
  quint64 m_generation = 0;
  quint64 m_ticket = 0;
  QTimer* m_clock;  // relative times ("in 3 h") age: repaint those columns now and then
};

}  // namespace idem::ui
