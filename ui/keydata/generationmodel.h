#pragma once
// The Generations tab's model: one row per generation of the key, live and archived, with
// core's summary of each (executions by core's rule, replays).
#include <QAbstractTableModel>

#include "ui/keydata/keydetail.h"

namespace idem::ui {

class GenerationModel final : public QAbstractTableModel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(GenerationModel)

 public:
  enum Column {
    ColGeneration, ColWhere, ColState, ColStatus, ColResource, ColCreated, ColExpires, ColArchived, ColExecutions,
    ColReplays, ColFingerprint, ColumnCount
  };
  explicit GenerationModel(QObject* parent = nullptr);

  void setDetail(SharedKeyDetail detail);
  void clear();
  [[nodiscard]] const explain::Generation* generationAt(int row) const;
  [[nodiscard]] const SharedKeyDetail& sharedDetail() const { return m_detail; }

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;

 private:
  SharedKeyDetail m_detail = noKeyDetail();
  QDateTime m_now;
};

}  // namespace idem::ui
