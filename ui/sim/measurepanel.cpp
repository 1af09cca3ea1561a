#include "ui/sim/measurepanel.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "core/sim/policytext.h"
#include "ui/common/dbsession.h"
#include "ui/sim/measuremodel.h"

using namespace Qt::StringLiterals;

namespace idem::ui::sim {
namespace {

const QString kHowToMeasure = QStringLiteral(
    "To measure a client, make its base URL <code>http://HOST:PORT/faults/&lt;profile&gt;[/op-&lt;id&gt;]/…</code> on "
    "<code>idemctl serve --allow-fault-injection</code> (profiles <code>500</code>, <code>503</code>, "
    "<code>503-retry-after-2</code>, <code>409</code>, <code>reset</code>, <code>hang</code>, …): nothing else in its "
    "code changes. Every attempt is recorded in the store's <code>idem_demo.fault_attempts</code>; "
    "<code>idemctl measure</code> prints the same figures.");

}  // namespace

MeasurePanel::MeasurePanel(QWidget* parent)
    : QWidget(parent),
      m_model(new MeasureModel(this)),
      m_since(new QLineEdit(this)),
      m_refresh(new QPushButton(tr("Refresh"), this)),
      m_status(new QLabel(this)),
      m_message(new QLabel(this)),
      m_content(new QWidget(this)),
      m_table(new QTableView(m_content)),
      m_policyTitle(new QLabel(this)),
      m_policyWords(new QLabel(this)),
      m_notes(new QLabel(this)),
      m_useA(new QPushButton(tr("Use as policy A"), this)),
      m_useB(new QPushButton(tr("Use as policy B"), this)) {
  setObjectName(u"measurePanel"_s);
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  m_since->setObjectName(u"measureSince"_s);
  m_since->setPlaceholderText(tr("all · 15m · 2h · 2026-12-04 20:00Z"));
  m_since->setClearButtonEnabled(true);
  m_since->setToolTip(
      tr("Only attempts that arrived within this long before the database's clock, or at or after "
         "this timestamp; empty: every attempt recorded"));
  m_since->setMinimumWidth(260);
  m_since->setMaximumWidth(320);
  top->addWidget(new QLabel(tr("Since"), this));
  top->addWidget(m_since);
  top->addWidget(m_refresh);
  top->addWidget(m_status, 1);
  m_status->setWordWrap(true);
  layout->addLayout(top);

  m_message->setObjectName(u"measureMessage"_s);
  m_message->setWordWrap(true);
  m_message->setTextFormat(Qt::RichText);
  m_message->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_message, 1);  // hidden while figures are shown

  m_table->setObjectName(u"measureTable"_s);
  m_table->setModel(m_model);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  // A User-Agent can run to a hundred characters (botocore's): elided in the middle (the
  // library and version first, its settings last), whole in the tooltip.
  m_table->horizontalHeader()->setSectionResizeMode(MeasureModel::ClientColumn, QHeaderView::Interactive);
  m_table->setTextElideMode(Qt::ElideMiddle);
  m_table->verticalHeader()->setVisible(false);
  m_table->setWordWrap(false);

  auto* fitted = new QGroupBox(tr("The policy this client fits"), m_content);
  auto* fl = new QVBoxLayout(fitted);
  m_policyTitle->setTextFormat(Qt::RichText);
  m_policyWords->setObjectName(u"measurePolicy"_s);
  m_policyWords->setWordWrap(true);
  m_policyWords->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_notes->setWordWrap(true);
  m_notes->setStyleSheet(u"color: #555;"_s);
  auto* buttons = new QHBoxLayout;
  m_useA->setObjectName(u"measureUseA"_s);
  m_useB->setObjectName(u"measureUseB"_s);
  m_useA->setToolTip(tr("Load this fitted policy into the Policy A editor (its fields can be changed after)"));
  m_useB->setToolTip(tr("Load this fitted policy into the Policy B editor (its fields can be changed after)"));
  buttons->addWidget(m_useA);
  buttons->addWidget(m_useB);
  buttons->addStretch(1);
  fl->addWidget(m_policyTitle);
  fl->addWidget(m_policyWords);
  fl->addWidget(m_notes);
  fl->addLayout(buttons);
  // The fitted policy takes the height its words need; the table the rest.
  auto* content = new QVBoxLayout(m_content);
  content->setContentsMargins(0, 0, 0, 0);
  auto* hint = new QLabel(tr("Per client and fault; a retry's gap is the time from one attempt's arrival to the "
                             "next, min / p50 / max seconds over the operations. Hover a cell for sleeps and offsets."),
                          m_content);
  hint->setWordWrap(true);
  content->addWidget(hint);
  content->addWidget(m_table, 1);
  content->addWidget(fitted);
  layout->addWidget(m_content, 1);

  connect(m_refresh, &QPushButton::clicked, this, &MeasurePanel::reload);
  connect(m_since, &QLineEdit::returnPressed, this, &MeasurePanel::reload);
  connect(m_useA, &QPushButton::clicked, this, [this] { use(0); });
  connect(m_useB, &QPushButton::clicked, this, [this] { use(1); });
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& i) { selectClient(m_model->clientOfRow(i.row())); });
  showMessage(State::NoSession,
              tr("<h3>Measure a client</h3><p>Waiting for the store's connection…</p><p>%1</p>").arg(kHowToMeasure));
}

void MeasurePanel::setSession(DbSession* session) {
  if (m_session) disconnect(m_session, nullptr, this, nullptr);
  m_session = session;
  // A new connection (or a reconnect) may be another store: read it again if we were showing.
  connect(m_session, &DbSession::opened, this, [this] {
    if (m_everShown) reload();
  });
  if (m_everShown && m_session->state() == DbSession::State::Connected) reload();
}

void MeasurePanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (m_everShown) return;
  m_everShown = true;
  if (m_session && m_session->state() == DbSession::State::Connected) reload();
}

void MeasurePanel::reload() {
  if (!m_session) return;
  if (m_ticket) m_session->cancel(m_ticket);
  const quint64 generation = ++m_generation;
  const QString since = m_since->text().trimmed();
  m_state = State::Loading;
  m_status->setText(tr("Reading the recorded attempts…"));
  m_refresh->setEnabled(false);
  m_ticket = m_session->submit<Answer>(
      this,
      [text = since.toStdString()](pg::Connection& conn) {
        Answer a;
        const auto sinceUs = idem::measure::resolveSince(conn, text);
        if (!sinceUs) {
          a.badSince = true;
          return a;
        }
        // The fit simulates its candidates: seconds of CPU on a large sample, here on the worker.
        a.measured = idem::measure::measureRecorded(conn, *sinceUs);
        return a;
      },
      [this, generation, since](DbResult<Answer> result) {
        if (generation != m_generation) return;  // a newer question is on its way
        m_ticket = 0;
        m_refresh->setEnabled(true);
        if (!result.ok()) {
          showError(result.error);
        } else {
          answered(since, std::move(*result.value));
        }
        emit loaded();
      });
}

void MeasurePanel::answered(const QString& since, Answer answer) {
  m_since->setStyleSheet(QString());
  if (answer.badSince) {
    // The last figures stay: only the window was mistyped.
    m_state = State::BadSince;
    m_since->setStyleSheet(u"border: 1px solid #c01c8c;"_s);
    m_status->setText(tr("<span style='color:#c01c8c'>Since: “%1” is neither a duration (15m, 2h) nor a timestamp "
                         "(2026-12-04 20:00Z).</span>")
                          .arg(since.toHtmlEscaped()));
    return;
  }
  auto& measured = answer.measured;
  if (measured.tableMissing) {
    showMessage(State::MissingTable,
                tr("<h3>This database has no measured attempts table</h3><p>The console reads "
                   "<code>idem_demo.fault_attempts</code>, one of the demo's tables (schema <code>idem_demo</code>). "
                   "This store has no such table: it was migrated without <code>--demo</code> (a production store "
                   "has no demo tables), its <code>idem_demo</code> schema was dropped, or it is not the database "
                   "<code>idemctl serve</code> writes to (the demo's is <code>dbname=idem_demo</code>).</p><p>Run "
                   "<code>idemctl migrate --demo</code> on it, or connect the console to the endpoint's store.</p>"
                   "<p>%1</p>")
                    .arg(kHowToMeasure));
    m_status->setText(tr("No idem_demo.fault_attempts in this database."));
    return;
  }
  const QString window = since.isEmpty() ? tr("in this database") : tr("since %1").arg(since);
  if (measured.clients.empty()) {
    showMessage(State::Empty,
                tr("<h3>No measured attempts %1</h3><p>Point a client at <code>idemctl serve "
                   "--allow-fault-injection</code> <code>/faults/&lt;profile&gt;/…</code>, then press Refresh.</p>"
                   "<p>%2</p>")
                    .arg(window.toHtmlEscaped(), kHowToMeasure));
    m_status->setText(tr("No attempts recorded on fault routes %1.").arg(window));
    return;
  }
  m_state = State::Shown;
  m_message->setVisible(false);
  m_content->setVisible(true);
  const QString previous =
      m_client >= 0 && m_client < static_cast<int>(m_model->reports().size())
          ? QString::fromStdString(m_model->reports()[static_cast<std::size_t>(m_client)].userAgent)
          : QString();
  const auto clients = measured.clients.size();
  m_model->setReports(std::move(measured.clients));
  m_table->resizeColumnToContents(MeasureModel::ClientColumn);
  m_table->setColumnWidth(MeasureModel::ClientColumn, std::min(m_table->columnWidth(MeasureModel::ClientColumn), 200));
  // Keep the client that was chosen, if it is still there.
  int chosen = 0;
  for (std::size_t c = 0; c < m_model->reports().size(); ++c)
    if (QString::fromStdString(m_model->reports()[c].userAgent) == previous) chosen = static_cast<int>(c);
  m_table->selectRow(m_model->firstRowOf(chosen));
  selectClient(chosen);
  m_status->setText(tr("%n attempt(s) from %1 %2.", nullptr, static_cast<int>(measured.attempts))
                        .arg(tr("%n client(s)", nullptr, static_cast<int>(clients)), window));
}

void MeasurePanel::showError(const DbError& error) {
  switch (error.kind) {
    case DbError::Kind::Cancelled:
      m_state = m_model->rowCount() > 0 ? State::Shown : State::Failed;
      m_status->setText(tr("Cancelled. The figures shown (if any) are from the last complete reading."));
      return;
    case DbError::Kind::NotConnected:
    case DbError::Kind::Unavailable:
      showMessage(State::Failed, tr("<h3>The store could not be reached</h3><p>The console reconnects by itself; "
                                    "the figures load once the status bar says connected.</p><p>%1</p>")
                                     .arg(error.message.toHtmlEscaped()));
      break;
    default:
      showMessage(State::Failed,
                  tr("<h3>The store refused to give the recorded attempts</h3><p>%1</p><pre>%2</pre>")
                      .arg(error.sqlstate == u"42501"_s
                               ? tr("The console's role needs SELECT on idem_demo.fault_attempts (migration 0021 "
                                    "grants it to idem_console); ask the database administrator.")
                               : tr("Check the server's message below, then press Refresh."),
                           error.message.toHtmlEscaped()));
  }
  m_status->setText(tr("Not measured: %1").arg(error.message.section(u'\n', 0, 0)));
}

void MeasurePanel::showMessage(State state, const QString& html) {
  m_state = state;
  m_message->setText(html);
  m_message->setVisible(true);
  m_content->setVisible(false);
  m_model->clear();
  selectClient(-1);
}

void MeasurePanel::selectClient(int client) {
  const auto& reports = m_model->reports();
  m_client = client >= 0 && client < static_cast<int>(reports.size()) ? client : -1;
  m_useA->setEnabled(m_client >= 0);
  m_useB->setEnabled(m_client >= 0);
  if (m_client < 0) {
    m_policyTitle->clear();
    m_policyWords->clear();
    m_notes->clear();
    return;
  }
  const auto& c = reports[static_cast<std::size_t>(m_client)];
  m_policyTitle->setText(tr("<b>%1</b>").arg(MeasureModel::clientName(c).toHtmlEscaped()));
  m_policyWords->setText(QString::fromStdString(idem::sim::describePolicy(c.fitted)));
  QStringList notes;
  for (const auto& n : c.notes) notes << u"· "_s + QString::fromStdString(n);
  m_notes->setText(notes.join(u'\n'));
}

void MeasurePanel::use(int which) {
  if (m_client < 0) return;
  const auto& c = m_model->reports()[static_cast<std::size_t>(m_client)];
  emit usePolicy(which, c.fitted, MeasureModel::clientName(c));
}

}  // namespace idem::ui::sim
