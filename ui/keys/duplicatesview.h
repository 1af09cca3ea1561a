#pragma once
// The Keys workspace's "Suspected duplicates" list (the filter of that name): each request that
// repeated another key's execution of the same request, with the earlier key, route, tenant,
// gap and what became of it. Picking a row opens the repeating key; a double-click on the
// earlier key opens that one.
#include <QWidget>

#include "ui/keydata/keydetail.h"
#include "ui/keys/keyfilter.h"

class QLabel;
class QTableView;

namespace idem::ui {

class DbSession;
class DuplicateListModel;

class DuplicatesView final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(DuplicatesView)

 public:
  explicit DuplicatesView(DbSession* session, QWidget* parent = nullptr);

  void setFilter(const KeyFilter& filter);
  void refresh();
  [[nodiscard]] DuplicateListModel* model() const { return m_model; }
  [[nodiscard]] QTableView* table() const { return m_table; }
  /// "3 suspected duplicates" / "Loading…" / why none shows.
  [[nodiscard]] QString infoText() const;

 signals:
  /// The agent picked a pair's key (the repeat) or double-clicked its earlier key.
  void openKey(const idem::ui::KeyRef& key);
  void infoChanged();

 private:
  void fitColumns();

  DuplicateListModel* m_model;
  QTableView* m_table;
  QString m_error;
};

}  // namespace idem::ui
