#include "ui/keys/duplicatesview.h"

#include <QHeaderView>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/keys/duplicatelistmodel.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

DuplicatesView::DuplicatesView(DbSession* session, QWidget* parent)
    : QWidget(parent), m_model(new DuplicateListModel(session, this)), m_table(new QTableView(this)) {
  setObjectName(u"suspectedDuplicates"_s);
  m_table->setModel(m_model);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->verticalHeader()->hide();
  m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setWordWrap(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_table);

  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
    if (const DuplicatePair* p = m_model->pairAt(current.row()))
      emit openKey(KeyRef{p->tenant, p->endpoint, p->key, p->service});
  });
  connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    const DuplicatePair* p = m_model->pairAt(index.row());
    if (p && index.column() == DuplicateListModel::ColEarlierKey)
      emit openKey(KeyRef{p->tenant, p->endpoint, p->earlierKey, p->service});
  });
  connect(m_model, &DuplicateListModel::loadingChanged, this, &DuplicatesView::infoChanged);
  connect(m_model, &DuplicateListModel::loadFailed, this, [this](const DbError& e) {
    m_error = e.message;
    emit infoChanged();
  });
  connect(m_model, &DuplicateListModel::pageLoaded, this, [this](int, bool first) {
    if (first) fitColumns();
    emit infoChanged();
  });
}

void DuplicatesView::setFilter(const KeyFilter& filter) {
  m_error.clear();
  m_model->setFilter(filter);
}

void DuplicatesView::refresh() {
  m_error.clear();
  m_model->refresh();
}

QString DuplicatesView::infoText() const {
  if (!m_error.isEmpty()) return tr("Could not load the suspected duplicates: %1").arg(m_error);
  if (m_model->isLoading()) return tr("Loading…");
  if (!m_model->loaded()) return {};
  const int n = m_model->rowCount();
  if (n == 0)
    return tr("No suspected duplicates across keys match these filters (a tier finds them only with \"cross_key\" "
              "on).");
  QString text = (n == 1 ? tr("1 suspected duplicate across keys") : tr("%1 suspected duplicates across keys").arg(n)) %
                 u" "_s % tr("(a request repeated under a new key)");
  if (m_model->atCapacity()) text += u" · "_s % tr("the newest %1 shown: narrow the filters for older ones").arg(n);
  else if (m_model->canFetchMore({})) text += u" · "_s % tr("scroll for more");
  return text;
}

void DuplicatesView::fitColumns() {
  const QAbstractItemView* view = m_table;
  for (int c = 0; c + 1 < DuplicateListModel::ColumnCount; ++c)
    m_table->setColumnWidth(c, std::max(view->sizeHintForColumn(c), m_table->horizontalHeader()->sectionSizeHint(c)));
}

}  // namespace idem::ui
