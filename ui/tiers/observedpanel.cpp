#include "ui/tiers/observedpanel.h"

#include <QDateTime>
#include <algorithm>
#include <QHeaderView>
#include <QLabel>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/common/timefmt.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

constexpr int kRouteRole = Qt::UserRole + 1;
constexpr int kKeyRole = Qt::UserRole + 2;

QStandardItem* cell(const QString& text, Qt::Alignment align = Qt::AlignLeft | Qt::AlignVCenter) {
  auto* item = new QStandardItem(text);
  item->setEditable(false);
  item->setTextAlignment(align);
  return item;
}

QTableView* table(QStandardItemModel* model, QWidget* parent) {
  auto* view = new QTableView(parent);
  view->setModel(model);
  view->setSelectionBehavior(QAbstractItemView::SelectItems);
  view->setSelectionMode(QAbstractItemView::SingleSelection);
  view->verticalHeader()->hide();
  view->setWordWrap(false);
  view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view->horizontalHeader()->setStretchLastSection(true);
  return view;
}

tiers::Would wouldOfColumn(int column) {
  return tiers::kWouldColumns[static_cast<std::size_t>(column - ObservedPanel::kFirstCountColumn)];
}

}  // namespace

ObservedPanel::ObservedPanel(QWidget* parent)
    : QWidget(parent),
      m_summary(new QLabel(this)),
      m_routesModel(new QStandardItemModel(0, kFirstCountColumn + static_cast<int>(std::size(tiers::kWouldColumns)),
                                           this)),
      m_routesView(table(m_routesModel, this)),
      m_requestsTitle(new QLabel(this)),
      m_requestsModel(new QStandardItemModel(0, 6, this)),
      m_requestsView(table(m_requestsModel, this)) {
  setObjectName(u"observedPanel"_s);
  m_routesView->setObjectName(u"observedRoutes"_s);
  // The counts stay beside their route; what is left over stays empty rather than widening one.
  m_routesView->horizontalHeader()->setStretchLastSection(false);
  m_requestsView->setObjectName(u"observedRequests"_s);
  QStringList heads{tr("Route"), tr("Tier")};
  for (const tiers::Would w : tiers::kWouldColumns) heads << tr(tiers::wouldHeading(w).c_str());
  m_routesModel->setHorizontalHeaderLabels(heads);
  m_requestsModel->setHorizontalHeaderLabels(
      {tr("Time"), tr("Tenant"), tr("Key"), tr("Would answer"), tr("Request id"), tr("Detail")});
  m_summary->setWordWrap(true);
  m_requestsTitle->setText(tr("Click a count to list the requests behind it; double-click one with a key to open "
                              "the key."));
  m_requestsView->setToolTip(tr("Double-click a request with a key to open the key in the key browser"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_summary);
  layout->addWidget(m_routesView, 1);
  layout->addWidget(m_requestsTitle);
  layout->addWidget(m_requestsView, 2);
  setRoutes({});

  connect(m_routesView, &QTableView::clicked, this, &ObservedPanel::cellClicked);
  connect(m_requestsView, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
    const QString key = m_requestsModel->index(i.row(), 0).data(kKeyRole).toString();
    if (!key.isEmpty()) emit keyOpened(key);
  });
}

void ObservedPanel::setRoutes(std::vector<tiers::ObservedRoute> routes) {
  m_routesModel->removeRows(0, m_routesModel->rowCount());
  m_requestsModel->removeRows(0, m_requestsModel->rowCount());
  long long total = 0;
  for (const auto& r : routes) {
    QList<QStandardItem*> row{cell(QString::fromStdString(r.route)), cell(QString::fromStdString(r.tier))};
    row.front()->setData(QString::fromStdString(r.route), kRouteRole);
    for (const tiers::Would w : tiers::kWouldColumns) {
      auto* count = cell(QString::number(r.count(w)), Qt::AlignRight | Qt::AlignVCenter);
      if (r.count(w) > 0) {
        QFont bold = count->font();
        bold.setBold(true);
        count->setFont(bold);
      }
      row << count;
    }
    m_routesModel->appendRow(row);
    total += r.total();
  }
  // As tall as its routes (up to six, then it scrolls): the rest is the requests' room.
  const int shown = std::clamp(static_cast<int>(routes.size()), 1, 6);
  m_routesView->setFixedHeight(m_routesView->horizontalHeader()->sizeHint().height() +
                               shown * m_routesView->verticalHeader()->defaultSectionSize() +
                               2 * m_routesView->frameWidth());
  m_summary->setText(
      routes.empty()
          ? tr("<b>Rollout</b> — no route of a tier in <code>observe</code> saw a request enforcement would have "
               "answered itself in this period. (A tier in <code>observe</code> passes every request on and records "
               "what <code>required</code> would have done.)")
          : tr("<b>Rollout</b> — %n request(s) on routes in <code>observe</code> would have been answered by "
               "enforcement instead of the service in this period. Switch a route to <code>required</code> once "
               "these are the answers its clients should get.",
               nullptr, static_cast<int>(total)));
}

void ObservedPanel::pickLargest() {
  QModelIndex largest;
  long long most = 0;
  for (int row = 0; row < m_routesModel->rowCount(); ++row)
    for (int column = kFirstCountColumn; column < m_routesModel->columnCount(); ++column) {
      const long long n = m_routesModel->index(row, column).data().toString().toLongLong();
      if (n > most) {
        most = n;
        largest = m_routesModel->index(row, column);
      }
    }
  if (!largest.isValid()) return;
  m_routesView->setCurrentIndex(largest);
  cellClicked(largest);
}

void ObservedPanel::cellClicked(const QModelIndex& index) {
  if (!index.isValid() || index.column() < kFirstCountColumn) return;
  const QString route = m_routesModel->index(index.row(), 0).data(kRouteRole).toString();
  emit requestsWanted(route, wouldOfColumn(index.column()));
}

void ObservedPanel::pick(const QString& route, tiers::Would would) {
  for (int row = 0; row < m_routesModel->rowCount(); ++row)
    if (m_routesModel->index(row, 0).data(kRouteRole).toString() == route) {
      const int column = kFirstCountColumn + static_cast<int>(would);
      m_routesView->setCurrentIndex(m_routesModel->index(row, column));
      cellClicked(m_routesModel->index(row, column));
      return;
    }
}

void ObservedPanel::setRequests(const QString& route, tiers::Would would,
                                const std::vector<tiers::ObservedRequest>& requests) {
  m_requestsModel->removeRows(0, m_requestsModel->rowCount());
  long long standFor = 0;  // a folded row (the trace folds identical decisions of one batch) is several
  for (const auto& q : requests) {
    standFor += q.repeats;
    const QString key = QString::fromStdString(q.key);
    QList<QStandardItem*> row{
        cell(formatAbsolute(QDateTime::fromMSecsSinceEpoch(q.atMs, Qt::UTC))),
        cell(QString::fromStdString(q.tenant)),
        cell(key.isEmpty() ? tr("(no key)") : key),
        cell(q.repeats > 1 ? tr("%1 (×%2)").arg(q.status).arg(q.repeats) : QString::number(q.status)),
        cell(QString::fromStdString(q.requestId)),
        cell(QString::fromStdString(q.detail))};
    row.front()->setData(key, kKeyRole);
    m_requestsModel->appendRow(row);
  }
  // Sized now, not when the view was last laid out: rows that arrive while the tab is hidden
  // would otherwise keep the empty table's widths ("20…" for a time).
  m_requestsView->horizontalHeader()->resizeSections(QHeaderView::ResizeToContents);
  m_requestsTitle->setText(tr("<b>%1</b> on <code>%2</code>: the newest %n request(s) behind the count (identical "
                              "ones moments apart share a row, ×n). Double-click one with a key to open it.",
                              nullptr, static_cast<int>(standFor))
                               .arg(tr(tiers::wouldHeading(would).c_str()), route.toHtmlEscaped()));
}

long long ObservedPanel::countShown(const QString& route, tiers::Would would) const {
  for (int row = 0; row < m_routesModel->rowCount(); ++row)
    if (m_routesModel->index(row, 0).data(kRouteRole).toString() == route)
      return m_routesModel->index(row, kFirstCountColumn + static_cast<int>(would)).data().toString().toLongLong();
  return -1;
}

}  // namespace idem::ui
