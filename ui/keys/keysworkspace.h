#pragma once
// The Keys workspace (support staff): states with counts and filters on the left, the key
// table above the key's detail tabs on the right. It owns its models; the main window only
// places it. The case an agent works on (search, landing, the letter's export) is implemented
// in keysworkspacecase.cpp.
#include <QSet>
#include <QWidget>
#include <optional>

#include "ui/common/connectparams.h"
#include "ui/common/dbresult.h"
#include "ui/keydata/keydetail.h"
#include "ui/keys/keyfilter.h"
#include "ui/keys/keyquery.h"

class QLabel;
class QSplitter;
class QTableView;
class QTreeView;

namespace idem::ui {

class DbSession;
class DuplicatesView;
class FilterPanel;
class KeyDetailWidget;
class KeyListModel;
class StateCountModel;

class KeysWorkspace final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(KeysWorkspace)

 public:
  KeysWorkspace(DbSession* browse, DbSession* detail, QWidget* parent = nullptr);

  /// Where a CSV export opens its own connection.
  void setConnectParams(const ConnectParams& params) { m_params = params; }
  /// The global search: a key, a resource id or a prefix; lands on the key when found.
  void search(const QString& text);
  /// Shows hit's key in the table (filtered to it) and opens its detail.
  void landOn(const KeyHit& hit);
  void setState(KeyState state);
  void setFilter(const KeyFilter& filter);
  /// Reloads counts, the table and the open key.
  void reload();
  void copySelectedKeys();
  /// The folder exportToCaseFolder writes into.
  void setCaseFolder(const QString& folder) { m_caseFolder = folder; }
  /// Writes the open key's explanation for audience as a PDF into the case folder, named after
  /// the key and the resource id it was found by (the customer's version ends "-customer"); no
  /// dialog. Returns the path ("" when nothing to export).
  QString exportToCaseFolder(explain::Audience audience);
  /// Why the open case cannot be exported now ("" when it can): a search running or matching
  /// nothing, a search typed but not run, no key open, the store lost, the detail loading.
  [[nodiscard]] QString exportBlockedReason() const;
  /// The search box's text as the agent edits it (not yet searched): while it names something
  /// else than the case open, that case is not exported by mistake.
  void setTypedSearch(const QString& text);
  /// "Filtered by search “…” ✕" above the table while a search's filters are in force.
  [[nodiscard]] QWidget* searchChip() const { return m_searchChip; }
  [[nodiscard]] QLabel* infoLabel() const { return m_info; }
  [[nodiscard]] QTreeView* stateView() const { return m_stateView; }
  void exportCsv();

  [[nodiscard]] KeyListModel* keyModel() const { return m_keys; }
  [[nodiscard]] StateCountModel* stateModel() const { return m_states; }
  [[nodiscard]] KeyDetailWidget* detail() const { return m_detail; }
  [[nodiscard]] QTableView* table() const { return m_table; }
  [[nodiscard]] FilterPanel* filterPanel() const { return m_filters; }
  /// The "Suspected duplicates" list, shown in the key table's place while that filter is on.
  [[nodiscard]] DuplicatesView* duplicatesView() const { return m_duplicates; }
  [[nodiscard]] QList<QSplitter*> splitters() const { return {m_hsplit, m_vsplit}; }

 signals:
  /// A line for the status bar ("No key or resource matches …").
  void message(const QString& text);
  /// A search landed on hit's key (the case book keeps it as a recent lookup).
  void landed(const idem::ui::KeyHit& hit, const QString& searched);
  /// A case export was written (or not).
  void caseExported(const idem::ui::KeyRef& key, const QString& path);
  /// Something the agent must notice: no match, an export refused or failed.
  void warning(const QString& text);
  /// Export became possible ("") or not (the reason).
  void exportBlockedChanged(const QString& reason);

 private:
  void openRow(int row);
  /// Opens ref's detail as the agent's pick (a row, a pair, the header's related key).
  void openKey(const KeyRef& ref);
  /// Shows the suspected duplicates (filter.suspectedDuplicates) or the keys, with filter.
  void showList(const KeyFilter& filter);
  void filtersEdited();
  void showHits(const QString& text, const std::vector<KeyHit>& hits);
  void pageLoaded(bool firstPage);
  void updateInfo();
  void fitColumnsToRows();
  void fitListToFewRows();
  void restoreListHeight();
  void updateExportable();
  void browseStateChanged();
  /// Puts the filters a search asked for in force, saying so in the chip.
  void applySearchFilter(const KeyFilter& filter, const QString& searched);
  void clearSearchFilter();
  /// The letter about to be written is about the case open ("" when it is; else why not).
  [[nodiscard]] QString letterMismatch(explain::Audience audience) const;

  DbSession* m_browse;
  DbSession* m_detailSession;
  ConnectParams m_params;
  StateCountModel* m_states;
  KeyListModel* m_keys;
  QTreeView* m_stateView;
  FilterPanel* m_filters;
  QTableView* m_table;
  DuplicatesView* m_duplicates;
  QLabel* m_info;
  KeyDetailWidget* m_detail;
  QSplitter* m_hsplit;
  QSplitter* m_vsplit;
  KeyRef m_pendingSelect;  // after landOn: select this row when its page arrives
  QString m_caseFolder;
  QString m_foundByResource;  // the resource id the open key was found by, for the file name
  bool m_landing = false;  // after landOn: the next detail decides the tab (Explain for a duplicate)
  quint64 m_searchGeneration = 0;
  QString m_searchText;     // the last search run
  QString m_typedSearch;    // the search box, edited since (empty: not edited)
  QString m_caseProblem;    // the last search is running or found nothing: no case to export
  bool m_storeLost = false;  // the browse session lost the store: what is shown is old
  std::optional<QString> m_lastBlocked;  // the reason last announced (exportBlockedChanged)
  QWidget* m_searchChip;
  QLabel* m_searchChipText;
  KeyFilter m_filterBeforeSearch;
  QList<int> m_splitBeforeLanding;  // the list/detail split before a search shrank the list
  QSet<int> m_handSizedColumns;  // widths the agent chose: the fit leaves them alone
  bool m_fittingColumns = false;
};

}  // namespace idem::ui
