#pragma once
// The trace's events: the table under the timeline shows them, and the timeline paints
// the same model, so a selection in one is a selection in the other.
#include <QAbstractTableModel>

#include "ui/keydata/keydetail.h"

namespace idem::ui {

class EventModel final : public QAbstractTableModel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(EventModel)

 public:
  enum Column { ColAt, ColOutcome, ColGeneration, ColStatus, ColLatency, ColRequest, ColDetail, ColumnCount };
  static constexpr int AtMsRole = Qt::UserRole + 1;      ///< qint64 ms since the epoch
  static constexpr int OutcomeRole = Qt::UserRole + 2;   ///< the raw outcome name

  explicit EventModel(QObject* parent = nullptr);

  void setDetail(SharedKeyDetail detail);
  void clear();
  [[nodiscard]] const explain::Event* eventAt(int row) const;
  [[nodiscard]] const KeyDetail& detail() const { return *m_detail; }
  [[nodiscard]] const SharedKeyDetail& sharedDetail() const { return m_detail; }
  /// A multi-line description for tooltips and the clipboard.
  [[nodiscard]] QString describe(int row) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;

 private:
  SharedKeyDetail m_detail = noKeyDetail();
};

}  // namespace idem::ui
