#pragma once
// The "Suspected duplicates" list: requests that repeated another key's execution of the same
// request (a client that made a new key for its retry), each with the earlier key it repeats.
// Pages are read on the session's worker thread, newest first; answers to an older filter are
// dropped by a generation counter, as in the key list.
#include <QAbstractTableModel>
#include <vector>

#include "ui/common/dbresult.h"
#include "ui/keys/duplicatequery.h"

namespace idem::ui {

class DbSession;

class DuplicateListModel final : public QAbstractTableModel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(DuplicateListModel)

 public:
  enum Column { ColWhen, ColKey, ColEarlierKey, ColRoute, ColTenant, ColGap, ColWhat, ColResources, ColumnCount };

  explicit DuplicateListModel(DbSession* session, QObject* parent = nullptr);

  /// Replaces the filter and loads its first page.
  void setFilter(const KeyFilter& filter);
  void refresh();
  [[nodiscard]] const DuplicatePair* pairAt(int row) const;
  [[nodiscard]] bool isLoading() const { return m_loading; }
  /// Rows are held up to this many; the rest wait for narrower filters (memory stays bounded).
  void setCapacity(int rows) { m_capacity = rows; }
  void setPageSize(int rows) { m_pageSize = rows; }
  [[nodiscard]] bool atCapacity() const { return rowCount() >= m_capacity && m_hasMore; }
  [[nodiscard]] bool loaded() const { return m_loaded; }

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;
  [[nodiscard]] bool canFetchMore(const QModelIndex& parent) const override;
  void fetchMore(const QModelIndex& parent) override;

  /// "held (409)": what became of the repeat, in the words the Keys workspace uses.
  [[nodiscard]] static QString whatHappened(const QString& outcome);

 signals:
  void loadingChanged(bool loading);
  void loadFailed(const idem::ui::DbError& error);
  void pageLoaded(int rows, bool firstPage);

 private:
  void request(bool first);
  void setLoading(bool loading);

  DbSession* m_session;
  KeyFilter m_filter;
  std::vector<DuplicatePair> m_rows;
  int m_pageSize = 200;
  int m_capacity = 2000;
  bool m_hasMore = false;
  bool m_loading = false;
  bool m_loaded = false;
  quint64 m_generation = 0;
  quint64 m_ticket = 0;
};

}  // namespace idem::ui
