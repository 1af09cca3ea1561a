#include "ui/keys/keysworkspace.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QFileDialog>
#include <QFrame>
#include <QHBoxLayout>
#include <QToolButton>
#include <QHeaderView>
#include <QLabel>
#include <QScopedValueRollback>
#include <QScrollBar>
#include <QSplitter>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>
#include <set>
#include <utility>

#include "ui/common/dbsession.h"
#include "ui/common/timefmt.h"
#include "ui/explain/explainview.h"
#include "ui/detail/keydetailwidget.h"
#include "ui/keys/csvexportrunner.h"
#include "ui/keys/duplicatesview.h"
#include "ui/keys/filterpanel.h"
#include "ui/keys/keylistmodel.h"
#include "ui/keys/statecountmodel.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

KeysWorkspace::KeysWorkspace(DbSession* browse, DbSession* detail, QWidget* parent)
    : QWidget(parent), m_browse(browse), m_detailSession(detail), m_states(new StateCountModel(browse, this)),
      m_keys(new KeyListModel(browse, this)), m_stateView(new QTreeView(this)), m_filters(new FilterPanel(this)),
      m_table(new QTableView(this)), m_duplicates(new DuplicatesView(browse, this)), m_info(new QLabel(this)), m_detail(new KeyDetailWidget(detail, this)),
      m_hsplit(new QSplitter(Qt::Horizontal, this)), m_vsplit(new QSplitter(Qt::Vertical, this)),
      m_searchChip(new QFrame(this)), m_searchChipText(new QLabel(m_searchChip)) {
  m_stateView->setModel(m_states);
  m_stateView->setRootIsDecorated(false);
  m_stateView->setHeaderHidden(true);
  m_stateView->setUniformRowHeights(true);
  m_stateView->header()->setStretchLastSection(false);
  m_stateView->header()->setSectionResizeMode(StateCountModel::ColName, QHeaderView::Stretch);
  m_stateView->header()->setSectionResizeMode(StateCountModel::ColCount, QHeaderView::ResizeToContents);
  m_stateView->setSelectionMode(QAbstractItemView::SingleSelection);
  m_stateView->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_stateView->setMaximumHeight(130);
  m_stateView->setCurrentIndex(m_states->index(0, 0));

  auto* left = new QWidget(this);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(4, 4, 4, 4);
  auto* statesTitle = new QLabel(tr("<b>States</b>"), left);
  auto* filtersTitle = new QLabel(tr("<b>Filters</b>"), left);
  leftLayout->addWidget(statesTitle);
  leftLayout->addWidget(m_stateView);
  leftLayout->addWidget(filtersTitle);
  leftLayout->addWidget(m_filters);
  leftLayout->addStretch(1);

  m_table->setModel(m_keys);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_table->setVerticalScrollMode(QAbstractItemView::ScrollPerItem);  // scrollbar in rows: see windowShiftedAtTop
  m_table->verticalHeader()->hide();
  m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->horizontalHeader()->setSortIndicator(KeyListModel::ColExpires, Qt::DescendingOrder);
  m_table->setSortingEnabled(true);
  m_table->setWordWrap(false);
  m_table->setContextMenuPolicy(Qt::ActionsContextMenu);
  const int charW = m_table->fontMetrics().averageCharWidth();
  m_table->setColumnWidth(KeyListModel::ColKey, 30 * charW);
  m_table->setColumnWidth(KeyListModel::ColScope, 34 * charW);
  m_table->setColumnWidth(KeyListModel::ColGeneration, 5 * charW);
  m_table->setColumnWidth(KeyListModel::ColState, 18 * charW);
  m_table->setColumnWidth(KeyListModel::ColStatus, 9 * charW);
  m_table->setColumnWidth(KeyListModel::ColResource, 20 * charW);
  m_table->setColumnWidth(KeyListModel::ColCreated, 22 * charW);

  connect(m_table->horizontalHeader(), &QHeaderView::sectionResized, this, [this](int column) {
    if (!m_fittingColumns) m_handSizedColumns.insert(column);
  });

  auto* copy = new QAction(tr("&Copy key"), m_table);
  copy->setShortcut(QKeySequence::Copy);
  copy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(copy, &QAction::triggered, this, &KeysWorkspace::copySelectedKeys);
  auto* exportAction = new QAction(tr("&Export CSV…"), m_table);
  connect(exportAction, &QAction::triggered, this, &KeysWorkspace::exportCsv);
  auto* refresh = new QAction(tr("&Refresh"), m_table);
  refresh->setShortcut(QKeySequence::Refresh);
  refresh->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(refresh, &QAction::triggered, this, &KeysWorkspace::reload);
  m_table->addActions({copy, exportAction, refresh});

  // A search narrows the table to what it found; the chip says so and gives the rest back.
  m_searchChip->setObjectName(u"searchChip"_s);
  m_searchChip->setStyleSheet(u"#searchChip { background: #eaf2fb; border: 1px solid #7aa7d8; border-radius: 4px; }"_s);
  auto* chipClose = new QToolButton(m_searchChip);
  chipClose->setObjectName(u"clearSearchFilter"_s);
  chipClose->setText(tr("✕ Show all keys"));
  chipClose->setAutoRaise(true);
  connect(chipClose, &QToolButton::clicked, this, &KeysWorkspace::clearSearchFilter);
  auto* chipLayout = new QHBoxLayout(m_searchChip);
  chipLayout->setContentsMargins(6, 1, 2, 1);
  chipLayout->addWidget(m_searchChipText, 1);
  chipLayout->addWidget(chipClose);
  m_searchChip->hide();

  auto* top = new QWidget(this);
  auto* topLayout = new QVBoxLayout(top);
  topLayout->setContentsMargins(0, 0, 0, 0);
  topLayout->addWidget(m_searchChip);
  topLayout->addWidget(m_table, 1);
  topLayout->addWidget(m_duplicates, 1);
  topLayout->addWidget(m_info);
  m_duplicates->hide();
  connect(m_duplicates, &DuplicatesView::openKey, this, &KeysWorkspace::openKey);
  connect(m_duplicates, &DuplicatesView::infoChanged, this, &KeysWorkspace::updateInfo);
  m_vsplit->setObjectName(u"keysVertical"_s);
  m_vsplit->addWidget(top);
  m_vsplit->addWidget(m_detail);
  // The list is what an agent scans: it gets as much room as the detail below it.
  m_vsplit->setStretchFactor(0, 1);
  m_vsplit->setStretchFactor(1, 1);
  m_hsplit->setObjectName(u"keysHorizontal"_s);
  m_hsplit->addWidget(left);
  m_hsplit->addWidget(m_vsplit);
  m_hsplit->setStretchFactor(1, 1);
  m_hsplit->setSizes({270, 1000});
  m_vsplit->setSizes({430, 400});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_hsplit);

  connect(m_stateView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { setState(StateCountModel::stateAt(current.row())); });
  connect(m_filters, &FilterPanel::filterChanged, this, &KeysWorkspace::filtersEdited);
  connect(m_keys, &KeyListModel::pageLoaded, this, [this](int, bool first) { pageLoaded(first); });
  connect(m_keys, &KeyListModel::loadingChanged, this, &KeysWorkspace::updateInfo);
  connect(m_keys, &KeyListModel::loadFailed, this, [this](const DbError& e) {
    m_info->setText(tr("<span style='color:#d0312d'>Could not load keys: %1</span>").arg(e.message.toHtmlEscaped()));
  });
  // Keep the rows the user looks at in place when the window gains or drops rows above.
  connect(m_keys, &KeyListModel::windowShiftedAtTop, this, [this](int delta) {
    QScrollBar* bar = m_table->verticalScrollBar();
    bar->setValue(bar->value() + delta);
  });
  connect(m_table->verticalScrollBar(), &QScrollBar::valueChanged, this, [this](int value) {
    if (value == m_table->verticalScrollBar()->minimum() && m_keys->canFetchPrevious()) m_keys->fetchPrevious();
  });
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { openRow(current.row()); });
  connect(m_table, &QTableView::activated, this, [this](const QModelIndex& index) {
    openRow(index.row());
    m_detail->tabs()->setFocus();
  });
  connect(m_browse, &DbSession::opened, this, [this] {
    m_filters->setPolicy(m_browse->info().policyDocument);
    m_filters->setServices(m_browse->info().services);
    reload();
    m_detail->reload();  // after a loss the detail is old too; its own session may not know yet
  });
  connect(m_browse, &DbSession::stateChanged, this, &KeysWorkspace::browseStateChanged);
  connect(m_detailSession, &DbSession::opened, m_detail, &KeyDetailWidget::reload);
  connect(m_detail->explainView(), &ExplainView::caseExportRequested, this, &KeysWorkspace::exportToCaseFolder);
  connect(m_detail->explainView(), &ExplainView::exported, this,
          [this](const QString& path) { emit caseExported(m_detail->key(), path); });
  connect(m_detail->explainView(), &ExplainView::exportFailed, this, [this](const QString&, const QString& error) {
    emit warning(tr("Not exported: %1").arg(error));
  });
  // A search that lands on a key which ran more than once is a duplicate charge: the agent
  // needs the explanation (and its export) first, not the raw response.
  connect(m_detail, &KeyDetailWidget::detailLoaded, this, [this] {
    updateExportable();
    if (!std::exchange(m_landing, false)) return;
    if (m_detail->detail().executions() > 1) m_detail->setCurrentTab(KeyDetailWidget::ExplainTab);
  });
  connect(m_detail, &KeyDetailWidget::relatedKeyActivated, this, &KeysWorkspace::openKey);
  connect(m_detail, &KeyDetailWidget::loadFailed, this, [this] {
    m_landing = false;
    updateExportable();
  });
  updateInfo();
  updateExportable();
}

void KeysWorkspace::browseStateChanged() {
  const DbSession::State state = m_browse->state();
  const bool lost = state == DbSession::State::Reconnecting || state == DbSession::State::Failed;
  if (lost && !m_storeLost && m_keys->loadedAt().isValid()) {
    // What is on screen was read before: it says how old it is, and nothing of it is exported.
    m_storeLost = true;
    m_keys->setStale(true);
    m_detail->setStale(true);
  } else if (state == DbSession::State::Connected && m_storeLost) {
    m_storeLost = false;
    m_keys->setStale(false);  // the detail stays marked until it is read again
  }
  // The counts are as old as the list: greyed, and saying since when.
  m_stateView->setEnabled(!m_storeLost);
  m_stateView->setToolTip(m_storeLost ? formatStaleNote(m_keys->loadedAt()) : QString());
  updateInfo();
  updateExportable();
}

void KeysWorkspace::reload() {
  m_states->refresh();
  if (m_duplicates->isVisibleTo(this)) m_duplicates->refresh();
  else m_keys->refresh();
}

void KeysWorkspace::showList(const KeyFilter& filter) {
  const bool pairs = filter.suspectedDuplicates;
  m_table->setVisible(!pairs);
  m_duplicates->setVisible(pairs);
  // While the pairs show, the key list keeps its rows unread: no query for a hidden table.
  if (pairs) m_duplicates->setFilter(filter);
  else m_keys->setFilter(filter);
  updateInfo();
}

void KeysWorkspace::setState(KeyState state) {
  KeyFilter f = m_keys->filter();
  if (f.state == state) return;
  f.state = state;
  const QSignalBlocker block(m_stateView->selectionModel());
  m_stateView->setCurrentIndex(m_states->index(StateCountModel::rowOf(state), 0));
  if (m_duplicates->isVisibleTo(this)) m_filters->setFilter(m_filters->apply(f));  // a state lists keys again
  showList(f);
  m_states->refresh();
}

void KeysWorkspace::setFilter(const KeyFilter& filter) {
  m_filters->setFilter(filter);
  const QSignalBlocker block(m_stateView->selectionModel());
  m_stateView->setCurrentIndex(m_states->index(StateCountModel::rowOf(filter.state), 0));
  m_table->horizontalHeader()->setSortIndicator(KeyListModel::columnOf(filter.sort),
                                                filter.descending ? Qt::DescendingOrder : Qt::AscendingOrder);
  showList(filter);
}

void KeysWorkspace::filtersEdited() {
  m_searchChip->hide();  // the agent's own filters now
  restoreListHeight();
  showList(m_filters->apply(m_keys->filter()));
}

void KeysWorkspace::applySearchFilter(const KeyFilter& filter, const QString& searched) {
  if (!m_searchChip->isVisibleTo(this)) m_filterBeforeSearch = m_keys->filter();
  m_searchChipText->setText(tr("Filtered by search “%1”").arg(searched));
  m_searchChip->show();
  setFilter(filter);
}

void KeysWorkspace::clearSearchFilter() {
  m_searchChip->hide();
  restoreListHeight();
  KeyFilter f = m_filterBeforeSearch;
  f.sort = m_keys->filter().sort;
  f.descending = m_keys->filter().descending;
  setFilter(f);
}

void KeysWorkspace::openRow(int row) {
  if (const KeyRow* r = m_keys->rowAt(row)) openKey(KeyRef{r->tenant, r->endpoint, r->key, r->service});
}

void KeysWorkspace::openKey(const KeyRef& ref) {
  if (ref == m_detail->key()) return;
  m_landing = false;  // the agent picked another key: it keeps the tab it is on
  m_foundByResource.clear();
  m_caseProblem.clear();  // the row picked is the case now
  m_typedSearch.clear();
  m_detail->showKey(ref);
  updateExportable();
}

void KeysWorkspace::pageLoaded(bool firstPage) {
  // Re-assert the indicator: a click on an unsortable column leaves the order unchanged.
  m_table->horizontalHeader()->setSortIndicator(KeyListModel::columnOf(m_keys->filter().sort),
                                                m_keys->filter().descending ? Qt::DescendingOrder : Qt::AscendingOrder);
  updateInfo();
  if (firstPage) fitColumnsToRows();
  if (firstPage && m_pendingSelect.isValid()) fitListToFewRows();  // a search landed
  if (!firstPage || !m_pendingSelect.isValid()) return;
  for (int i = 0; i < m_keys->rowCount(); ++i) {
    const KeyRow* r = m_keys->rowAt(i);
    if (r->tenant == m_pendingSelect.tenant && r->endpoint == m_pendingSelect.endpoint && r->key == m_pendingSelect.key &&
        r->service == m_pendingSelect.service) {
      m_table->selectRow(i);
      m_table->scrollTo(m_keys->index(i, 0));
      break;
    }
  }
  m_pendingSelect = {};
}

void KeysWorkspace::fitColumnsToRows() {
  // Ids and times are read whole: a column fits the rows shown (no wider, the table has little
  // room to spare), unless the agent sized it by hand.
  const QAbstractItemView* view = m_table;  // QTableView hides the view's public size hint
  const QScopedValueRollback fitting(m_fittingColumns, true);
  for (int column : {KeyListModel::ColKey, KeyListModel::ColScope, KeyListModel::ColState, KeyListModel::ColResource,
                     KeyListModel::ColCreated}) {
    if (m_handSizedColumns.contains(column)) continue;
    m_table->setColumnWidth(column, std::max(view->sizeHintForColumn(column),
                                             m_table->horizontalHeader()->sectionSizeHint(column)));
  }
}

void KeysWorkspace::fitListToFewRows() {
  // A search that lands on a key lists a row or two: the list takes what they need and the
  // key's detail the rest, until the agent goes back to every key.
  const int rows = m_keys->rowCount();
  if (rows > 5) return;
  const int total = m_vsplit->sizes().value(0) + m_vsplit->sizes().value(1);
  if (total <= 0) return;
  const int rowHeight = m_table->verticalHeader()->defaultSectionSize();
  const int wanted = m_searchChip->sizeHint().height() + m_table->horizontalHeader()->sizeHint().height() +
                     std::max(rows, 2) * rowHeight + 2 * m_table->frameWidth() +
                     m_table->horizontalScrollBar()->sizeHint().height() + m_info->sizeHint().height() + 12;
  if (wanted >= m_vsplit->sizes().value(0)) return;
  if (m_splitBeforeLanding.isEmpty()) m_splitBeforeLanding = m_vsplit->sizes();
  m_vsplit->setSizes({wanted, total - wanted});
}

void KeysWorkspace::restoreListHeight() {
  if (m_splitBeforeLanding.isEmpty()) return;
  m_vsplit->setSizes(std::exchange(m_splitBeforeLanding, {}));
}

void KeysWorkspace::updateInfo() {
  if (m_duplicates->isVisibleTo(this)) {
    m_info->setText(m_duplicates->infoText());
    return;
  }
  if (m_keys->isLoading()) {
    m_info->setText(tr("Loading…"));
    return;
  }
  if (!m_keys->loadedAt().isValid()) {
    // No query ran: "no keys match" would claim an answer the store never gave.
    m_info->setText(m_browse->state() == DbSession::State::Connected ? QString()
                                                                       : tr("Not connected: no query ran."));
    return;
  }
  const int n = m_keys->rowCount();
  QString text = n > 0                        ? tr("%n key(s) loaded", nullptr, n)
                 : m_searchChip->isVisibleTo(this) ? tr("No key matches the search “%1”.").arg(m_searchText)
                                                   : tr("No keys match these filters.");
  if (m_keys->isStale()) text = formatStaleNote(m_keys->loadedAt()) % u": "_s % text;
  if (m_keys->canFetchMore({})) text += u" · "_s % tr("scroll for more");
  if (m_keys->canFetchPrevious()) text += u" · "_s % tr("earlier rows dropped from memory (scroll up to reload)");
  m_info->setText(text);
}

void KeysWorkspace::copySelectedKeys() {
  QStringList keys;
  std::set<int> rows;
  for (const auto& index : m_table->selectionModel()->selectedRows()) rows.insert(index.row());
  if (rows.empty() && m_table->currentIndex().isValid()) rows.insert(m_table->currentIndex().row());
  for (int row : rows)
    if (const KeyRow* r = m_keys->rowAt(row)) keys << r->key;
  if (keys.isEmpty()) {
    emit warning(tr("Nothing copied: select a key in the table first."));
    return;
  }
  QApplication::clipboard()->setText(keys.join(u'\n'));
  emit message(tr("Copied %n key(s)", nullptr, static_cast<int>(keys.size())));
}

void KeysWorkspace::exportCsv() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export keys as CSV"), u"idem-keys.csv"_s,
                                                    tr("CSV files (*.csv)"));
  if (path.isEmpty()) return;
  auto* runner = new CsvExportRunner(m_params, m_keys->filter(), path, this);
  connect(runner, &CsvExportRunner::finished, this, [this, runner](const QString& summary) {
    emit message(summary);
    runner->deleteLater();
  });
  runner->start();
}

}  // namespace idem::ui
