#pragma once
// The Cases workspace: find a case again (by ticket, note, key or resource id), read and edit
// its notes, see the keys looked at and the exports made; open a new case; the recent lookups.
#include <QWidget>

class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QTableView;
class QTimer;

namespace idem::ui {

class CaseBook;
class CaseListModel;

class CasesView final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(CasesView)

 public:
  explicit CasesView(CaseBook* book, QWidget* parent = nullptr);

  /// Opens a case for ticket, makes it current and selects it.
  qint64 newCase(const QString& ticket);
  /// Selects the case (and makes it current).
  void showCase(qint64 id);
  [[nodiscard]] CaseListModel* model() const { return m_model; }
  [[nodiscard]] QLineEdit* findBox() const { return m_find; }
  [[nodiscard]] QPlainTextEdit* notes() const { return m_notes; }
  [[nodiscard]] QTableView* table() const { return m_table; }
  /// Writes pending note edits now (they are otherwise saved shortly after typing stops).
  void saveNotes();

 signals:
  /// The agent double-clicked a key or a lookup: search for it.
  void searchRequested(const QString& text);

 private:
  void selectRow(int row);
  void reloadLookups();

  CaseBook* m_book;
  CaseListModel* m_model;
  QLineEdit* m_find;
  QTableView* m_table;
  QLabel* m_title;
  QPlainTextEdit* m_notes;
  QListWidget* m_keys;
  QListWidget* m_exports;
  QListWidget* m_lookups;
  QTimer* m_saveTimer;
  qint64 m_shown = 0;
};

}  // namespace idem::ui
