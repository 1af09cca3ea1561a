#pragma once
// The sidebar's states with their counts: All, Processing, Done, Expired (awaiting sweep),
// Archived. Counts are loaded on the worker thread; large ones are estimates, marked "≈".
#include <QAbstractTableModel>

#include "ui/keys/keyfilter.h"
#include "ui/keys/keyquery.h"

namespace idem::ui {

class DbSession;

class StateCountModel final : public QAbstractTableModel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(StateCountModel)

 public:
  enum Column { ColName, ColCount, ColumnCount };
  static constexpr int StateRole = Qt::UserRole + 1;

  explicit StateCountModel(DbSession* session, QObject* parent = nullptr);

  void refresh();
  [[nodiscard]] const StateCounts& counts() const { return m_counts; }
  [[nodiscard]] bool loaded() const { return m_loaded; }
  [[nodiscard]] static KeyState stateAt(int row);
  [[nodiscard]] static int rowOf(KeyState state);

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;

  /// "1.2 M", "340", "≈ 8.9 M".
  [[nodiscard]] static QString formatCount(qint64 n, bool estimated);

 signals:
  void countsLoaded();

 private:
  DbSession* m_session;
  StateCounts m_counts;
  bool m_loaded = false;
  quint64 m_generation = 0;
};

}  // namespace idem::ui
