#include "ui/cases/casesview.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "ui/cases/casebook.h"
#include "ui/cases/caselistmodel.h"
#include "ui/common/timefmt.h"
#include "ui/common/timezonesetting.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

CasesView::CasesView(CaseBook* book, QWidget* parent)
    : QWidget(parent), m_book(book), m_model(new CaseListModel(book, this)), m_find(new QLineEdit(this)),
      m_table(new QTableView(this)), m_title(new QLabel(this)), m_notes(new QPlainTextEdit(this)),
      m_keys(new QListWidget(this)), m_exports(new QListWidget(this)), m_lookups(new QListWidget(this)),
      m_saveTimer(new QTimer(this)) {
  m_find->setPlaceholderText(tr("Find a case: ticket, note, key or pay_… id"));
  m_find->setClearButtonEnabled(true);
  auto* add = new QPushButton(tr("&New case…"), this);
  auto* top = new QHBoxLayout;
  top->addWidget(m_find, 1);
  top->addWidget(add);

  m_table->setModel(m_model);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->verticalHeader()->hide();
  m_table->setWordWrap(false);
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setSectionResizeMode(CaseListModel::ColNotes, QHeaderView::Stretch);

  m_title->setTextFormat(Qt::RichText);
  m_notes->setPlaceholderText(tr("Notes for this case (saved as you type)"));
  auto* detail = new QWidget(this);
  auto* form = new QFormLayout(detail);
  form->addRow(m_title);
  form->addRow(tr("Notes"), m_notes);
  form->addRow(tr("Keys looked at"), m_keys);
  form->addRow(tr("Exports"), m_exports);
  m_keys->setToolTip(tr("Double-click to open the key"));

  auto* left = new QWidget(this);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->addLayout(top);
  leftLayout->addWidget(m_table, 2);
  leftLayout->addWidget(new QLabel(tr("<b>Recent lookups</b> (double-click to search again)"), this));
  leftLayout->addWidget(m_lookups, 1);

  auto* split = new QSplitter(Qt::Horizontal, this);
  split->setObjectName(u"casesSplitter"_s);
  split->addWidget(left);
  split->addWidget(detail);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(split);

  // Notes are saved a moment after typing stops: one small UPDATE, not one per key press.
  m_saveTimer->setSingleShot(true);
  m_saveTimer->setInterval(600);
  connect(m_saveTimer, &QTimer::timeout, this, &CasesView::saveNotes);
  connect(m_notes, &QPlainTextEdit::textChanged, this, [this] {
    if (m_shown) m_saveTimer->start();
  });
  connect(m_find, &QLineEdit::textChanged, m_model, &CaseListModel::setFilterText);
  connect(add, &QPushButton::clicked, this, [this] {
    bool ok = false;
    const QString ticket = QInputDialog::getText(this, tr("New case"), tr("Ticket reference:"), QLineEdit::Normal,
                                                 QString(), &ok);
    if (ok) newCase(ticket);
  });
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { selectRow(current.row()); });
  connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
    const int row = m_model->rowOf(m_shown);
    if (row >= 0) {
      const QSignalBlocker block(m_table->selectionModel());
      m_table->selectRow(row);
    }
    selectRow(row);
  });
  connect(m_book, &CaseBook::changed, this, &CasesView::reloadLookups);
  connect(m_keys, &QListWidget::itemDoubleClicked, this,
          [this](QListWidgetItem* item) { emit searchRequested(item->data(Qt::UserRole).toString()); });
  connect(m_lookups, &QListWidget::itemDoubleClicked, this,
          [this](QListWidgetItem* item) { emit searchRequested(item->data(Qt::UserRole).toString()); });
  // The times listed follow the zone shown.
  connect(&TimeZoneSetting::instance(), &TimeZoneSetting::changed, this, [this] {
    reloadLookups();
    selectRow(m_model->rowOf(m_shown));
  });
  reloadLookups();
  selectRow(-1);
}

qint64 CasesView::newCase(const QString& ticket) {
  saveNotes();
  const qint64 id = m_book->openCase(ticket);
  if (id) showCase(id);
  return id;
}

void CasesView::showCase(qint64 id) {
  saveNotes();
  m_book->setCurrentCase(id);
  m_shown = id;
  const int row = m_model->rowOf(id);
  if (row >= 0) m_table->selectRow(row);
  selectRow(row);
}

void CasesView::saveNotes() {
  if (!m_saveTimer->isActive() || !m_shown) return;
  m_saveTimer->stop();
  const qint64 id = m_shown;
  m_book->setNotes(id, m_notes->toPlainText());  // reloads the list; m_shown stays selected
}

void CasesView::selectRow(int row) {
  const CaseBook::Case* c = m_model->caseAt(row);
  if (c && c->id != m_shown) {
    saveNotes();
    m_shown = c->id;
    m_book->setCurrentCase(c->id);
  }
  const QSignalBlocker block(m_notes);
  m_keys->clear();
  m_exports->clear();
  m_notes->setEnabled(c != nullptr);
  if (!c) {
    m_title->setText(tr("<i>No case open. Lookups and exports are kept as recent lookups; “New case…” groups "
                        "them under a ticket.</i>"));
    m_notes->clear();
    return;
  }
  m_title->setText(tr("<b>%1</b> · opened %2 · current case: new lookups and exports are added to it")
                       .arg(c->ticket.toHtmlEscaped(), formatAbsolute(c->openedAt)));
  if (m_notes->toPlainText() != c->notes && !m_saveTimer->isActive()) m_notes->setPlainText(c->notes);
  for (const auto& k : c->keys) {
    auto* item = new QListWidgetItem(k.resource.isEmpty() ? k.key : k.key % u"  ·  "_s % k.resource, m_keys);
    item->setData(Qt::UserRole, k.key);
    item->setToolTip(k.tenant % u" "_s % k.endpoint);
  }
  for (const auto& e : c->exports) new QListWidgetItem(formatAbsolute(e.at) % u"  "_s % e.path, m_exports);
}

void CasesView::reloadLookups() {
  m_lookups->clear();
  for (const auto& l : m_book->recentLookups(30)) {
    auto* item = new QListWidgetItem(formatAbsolute(l.at) % u"  "_s % l.searched % u"  →  "_s % l.key, m_lookups);
    item->setData(Qt::UserRole, l.searched);
  }
}

}  // namespace idem::ui
