#pragma once
// The Cases view's list: the case book's cases matching a text, newest first (bounded by
// CaseBook::findCases' limit, so the view never holds the whole book).
#include <QAbstractTableModel>

#include "ui/cases/casebook.h"

namespace idem::ui {

class CaseListModel final : public QAbstractTableModel {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(CaseListModel)

 public:
  enum Column { ColTicket, ColUpdated, ColKeys, ColExports, ColNotes, ColumnCount };
  explicit CaseListModel(CaseBook* book, QObject* parent = nullptr);

  void setFilterText(const QString& text);
  void reload();
  [[nodiscard]] const CaseBook::Case* caseAt(int row) const;
  [[nodiscard]] int rowOf(qint64 id) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  CaseBook* m_book;
  QString m_filter;
  std::vector<CaseBook::Case> m_cases;
};

}  // namespace idem::ui
