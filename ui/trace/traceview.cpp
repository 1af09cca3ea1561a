#include "ui/trace/traceview.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/common/outcomestyle.h"
#include "ui/trace/eventmodel.h"
#include "ui/trace/timelinewidget.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

TraceView::TraceView(EventModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_summary(new QLabel(this)), m_timeline(new TimelineWidget(model, this)),
      m_table(new QTableView(this)) {
  auto* top = new QHBoxLayout;
  top->addWidget(m_summary, 1);
  auto addButton = [&](const QString& text, const QString& tip, auto slot) {
    auto* b = new QToolButton(this);
    b->setText(text);
    b->setToolTip(tip);
    connect(b, &QToolButton::clicked, this, slot);
    top->addWidget(b);
  };
  addButton(tr("Fit"), tr("Show every event (double-click the timeline, or Home)"), [this] { m_timeline->fitAll(); });
  addButton(u"+"_s, tr("Zoom in (wheel up, or +)"), [this] { m_timeline->zoom(1.5, m_timeline->width() / 2.0); });
  addButton(u"−"_s, tr("Zoom out (wheel down, or −)"), [this] { m_timeline->zoom(1 / 1.5, m_timeline->width() / 2.0); });

  m_summary->setTextFormat(Qt::RichText);
  m_table->setModel(model);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->verticalHeader()->hide();
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setWordWrap(false);

  auto* split = new QSplitter(Qt::Vertical, this);
  split->setObjectName(u"traceSplitter"_s);
  split->addWidget(m_timeline);
  split->addWidget(m_table);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(top);
  layout->addWidget(split, 1);

  connect(m_timeline, &TimelineWidget::eventClicked, this, [this](int row) {
    m_table->selectRow(row);
    m_table->scrollTo(m_model->index(row, 0));
  });
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { m_timeline->setSelectedRow(current.row()); });
  connect(model, &QAbstractItemModel::modelReset, this, [this] {
    updateSummary();
    m_table->resizeColumnsToContents();
  });
  updateSummary();
}

void TraceView::updateSummary() {
  const KeyDetail& d = m_model->detail();
  if (!d.ref.isValid()) {
    m_summary->setText(tr("Select a key to see its trace."));
    return;
  }
  // Core's summary, as the header, the Generations tab and `idemctl explain` read it.
  int replays = 0;
  int conflicts = 0;
  int rejected = 0;
  for (const auto& s : d.explanation.generations) {
    replays += s.replays;
    conflicts += s.conflicts;
    rejected += s.mismatches + s.rejectedExpired;
  }
  const int executions = d.executions();
  const QString color =
      outcomeStyle(executions > 1 ? trace::Outcome::ExecutedAfterExpiry : trace::Outcome::Executed).color.name();
  QString text = tr("<b style='color:%1'>executed %n time(s)</b>", nullptr, executions).arg(color) %
                 d.unansweredNote() % u" · "_s %
                 tr("%n generation(s)", nullptr, static_cast<int>(d.generations().size())) % u" · "_s %
                 tr("%n replay(s)", nullptr, replays) % u" · "_s % tr("%n conflict(s)", nullptr, conflicts) %
                 u" · "_s % tr("%n rejected", nullptr, rejected);
  if (d.eventsTruncated) text += u" · "_s % tr("<i>only the first %1 events are shown</i>").arg(d.events().size());
  m_summary->setText(text);
}

}  // namespace idem::ui
