#include "ui/tiers/tiersworkspace.h"

#include <algorithm>

#include <QApplication>
#include <QSignalBlocker>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QStandardPaths>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/common/dbsession.h"
#include "ui/common/filework.h"
#include "ui/common/timefmt.h"
#include "ui/tiers/observedpanel.h"
#include "ui/tiers/tierchart.h"
#include "ui/tiers/tiersexport.h"
#include "ui/tiers/tiertablemodel.h"
#include "ui/tiers/whatifpanel.h"

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;

namespace idem::ui {
using tiers::Millis;
namespace {

constexpr Millis kPeriods[] = {24h, 7 * 24h, 30 * 24h, 90 * 24h, 365 * 24h};
constexpr int kDefaultPeriod = 2;

}  // namespace

TiersWorkspace::TiersWorkspace(DbSession* session, QWidget* parent)
    : QWidget(parent), m_session(session), m_model(new TierTableModel(this)), m_table(new QTableView(this)),
      m_chart(new TierChart(this)), m_whatIf(new WhatIfPanel(this)), m_observed(new ObservedPanel(this)),
      m_bottom(new QTabWidget(this)), m_period(new QComboBox(this)), m_service(new QComboBox(this)),
      m_refresh(new QPushButton(tr("Refresh"), this)), m_cancel(new QPushButton(tr("Cancel"), this)),
      m_exportMenu(new QPushButton(tr("Export"), this)), m_status(new QLabel(this)), m_error(new QLabel(this)),
      m_placeholder(new QLabel(this)), m_split(new QSplitter(Qt::Vertical, this)) {
  setObjectName(u"tiersWorkspace"_s);
  m_period->setObjectName(u"tiersPeriod"_s);
  m_service->setObjectName(u"tiersService"_s);
  m_service->setToolTip(tr("Whose tiers: each service sharing this store has its own policy in force"));
  m_service->addItem(QString::fromLatin1(store::kDefaultService));
  m_split->setObjectName(u"tiersSplit"_s);
  for (Millis p : kPeriods) m_period->addItem(tr("last %1").arg(formatDuration(p.count())), QVariant::fromValue(p.count()));
  m_period->setCurrentIndex(kDefaultPeriod);
  m_period->setToolTip(tr("Which part of the trace the retries are read from"));
  m_cancel->setVisible(false);
  auto* menu = new QMenu(m_exportMenu);
  menu->addAction(tr("Chart as PNG…"), this, [this] { chooseExport(u"png"_s); });
  menu->addAction(tr("Chart as SVG…"), this, [this] { chooseExport(u"svg"_s); });
  menu->addAction(tr("Decision sheet (one-page PDF)…"), this, [this] { chooseExport(u"pdf"_s); });
  m_exportMenu->setMenu(menu);
  connect(this, &TiersWorkspace::pdfExported, this, &TiersWorkspace::savedOrNot);
  m_exportMenu->setEnabled(false);
  m_error->setWordWrap(true);
  m_error->setVisible(false);
  m_error->setStyleSheet(u"QLabel { background: #fdecea; border: 1px solid #d0312d; padding: 6px; }"_s);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("<b>Retention tiers</b> — retries observed over the"), this));
  bar->addWidget(m_period);
  bar->addWidget(new QLabel(tr("for service"), this));
  bar->addWidget(m_service);
  bar->addWidget(m_refresh);
  bar->addWidget(m_cancel);
  bar->addWidget(m_status, 1);
  bar->addWidget(m_exportMenu);

  m_table->setModel(m_model);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->verticalHeader()->hide();
  m_table->setWordWrap(false);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setStretchLastSection(true);  // the routes, elided when narrow
  m_table->setTextElideMode(Qt::ElideRight);
  m_table->setMinimumHeight(80);

  m_split->addWidget(m_table);
  m_split->addWidget(m_chart);
  m_bottom->setObjectName(u"tiersBottomTabs"_s);
  m_bottom->addTab(m_whatIf, tr("What if"));
  m_bottom->addTab(m_observed, tr("Rollout (observe)"));
  m_split->addWidget(m_bottom);
  m_split->setStretchFactor(0, 0);
  m_split->setStretchFactor(1, 3);
  m_split->setStretchFactor(2, 2);
  m_split->setChildrenCollapsible(false);
  // Defaults: the table about three rows tall; the main window restores the user's sizes over these.
  m_split->setSizes({125, 380, 330});

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(bar);
  layout->addWidget(m_error);
  layout->addWidget(m_placeholder, 1);
  layout->addWidget(m_split, 1);
  m_placeholder->setAlignment(Qt::AlignCenter);
  m_placeholder->setWordWrap(true);
  m_placeholder->setText(tr("<h3>Retention tiers</h3><p>Each tier of the policy in force against the retries the "
                            "trace has seen: which TTL is too short, and what another one would cost.</p>"
                            "<p>Waiting for the store's connection…</p>"));
  m_split->setVisible(false);

  connect(m_refresh, &QPushButton::clicked, this, &TiersWorkspace::reload);
  connect(m_cancel, &QPushButton::clicked, this, &TiersWorkspace::cancel);
  connect(m_period, &QComboBox::currentIndexChanged, this, [this] { reload(); });
  connect(m_service, &QComboBox::activated, this, [this] { reload(); });
  connect(m_whatIf, &WhatIfPanel::whatIfRequested, this, &TiersWorkspace::askWhatIf);
  connect(m_observed, &ObservedPanel::requestsWanted, this, &TiersWorkspace::askObservedRequests);
  connect(m_observed, &ObservedPanel::keyOpened, this, &TiersWorkspace::keyRequested);
  connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& i) {
    if (i.isValid()) m_whatIf->setTier(i.data(TierTableModel::NameRole).toString());
  });
  // A new connection (or a reconnect) may be another store: read it again if we were showing.
  connect(m_session, &DbSession::opened, this, [this] {
    fillServices();
    if (m_everShown) reload();
  });
}

void TiersWorkspace::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (!m_everShown) {
    m_everShown = true;
    if (m_session->state() == DbSession::State::Connected) {
      fillServices();
      reload();
    }
  }
}

void TiersWorkspace::setPeriod(Millis since) {
  for (int i = 0; i < m_period->count(); ++i)
    if (m_period->itemData(i).toLongLong() == since.count()) {
      if (i == m_period->currentIndex()) reload();
      m_period->setCurrentIndex(i);
      return;
    }
  m_period->addItem(tr("last %1").arg(formatDuration(since.count())), QVariant::fromValue(since.count()));
  m_period->setCurrentIndex(m_period->count() - 1);
}

void TiersWorkspace::fillServices() {
  const QStringList services = m_session->info().services;
  if (services.isEmpty()) return;  // a store from before services: "default" alone
  const QSignalBlocker block(m_service);
  const QString chosen = m_service->currentText();
  m_service->clear();
  m_service->addItems(services);
  // The one chosen before, else "default" where it exists, else the first.
  const int keep = m_service->findText(chosen);
  m_service->setCurrentIndex(keep >= 0 ? keep : std::max(0, m_service->findText(QString::fromLatin1(store::kDefaultService))));
}

QString TiersWorkspace::service() const { return m_service->currentText(); }

void TiersWorkspace::setService(const QString& service) {
  if (m_service->findText(service) < 0) m_service->addItem(service);
  m_service->setCurrentText(service);
  reload();
}

void TiersWorkspace::reload() {
  if (m_ticket) m_session->cancel(m_ticket);
  const quint64 generation = ++m_generation;
  tiers::Options options;
  options.since = Millis(m_period->currentData().toLongLong());
  options.service = service().isEmpty() ? std::string(store::kDefaultService) : service().toStdString();
  m_status->setText(tr("Reading the trace and the tables' sizes…"));
  readObserved(options.service, options.since);
  m_cancel->setVisible(true);
  m_ticket = m_session->submit<tiers::Report>(
      this, [options](pg::Connection& conn) { return tiers::analyse(conn, options); },
      [this, generation](DbResult<tiers::Report> result) {
        if (generation != m_generation) return;  // a newer question is on its way
        answered(std::move(result));
      });
}

void TiersWorkspace::cancel() {
  if (m_ticket) m_session->cancel(m_ticket);
}

void TiersWorkspace::answered(DbResult<tiers::Report> result) {
  m_ticket = 0;
  m_cancel->setVisible(false);
  if (!result.ok()) {
    showError(result.error);
    emit reportLoaded();
    return;
  }
  m_error->setVisible(false);
  m_placeholder->setVisible(false);
  m_split->setVisible(true);
  m_report = std::move(*result.value);
  m_model->setReport(*m_report);
  m_chart->setReport(*m_report);
  m_whatIf->setReport(*m_report);
  m_exportMenu->setEnabled(true);
  int flagged = 0;
  for (const auto& t : m_report->tiers) flagged += t.flagged() ? 1 : 0;
  m_status->setText(
      flagged ? tr("service %1, policy v%2 · %3 of %4 tiers too short for the retries or windows they face")
                    .arg(QString::fromStdString(m_report->service))
                    .arg(m_report->policyVersion)
                    .arg(flagged)
                    .arg(m_report->tiers.size())
              : tr("service %1, policy v%2 · every tier covers its retries and reference windows")
                    .arg(QString::fromStdString(m_report->service))
                    .arg(m_report->policyVersion));
  emit reportLoaded();
}

void TiersWorkspace::showError(const DbError& error) {
  QString what, next;
  switch (error.kind) {
    case DbError::Kind::Cancelled:
      m_status->setText(tr("Cancelled. The numbers shown (if any) are from the last complete reading."));
      return;
    case DbError::Kind::NotConnected:
    case DbError::Kind::Unavailable:
      what = tr("The store could not be reached, so the tiers cannot be measured.");
      next = tr("The console reconnects by itself; press Refresh once the status bar says connected.");
      break;
    case DbError::Kind::Query:
      what = tr("The store refused the tiers queries.");
      next = error.sqlstate == u"42501"_s ? tr("The console's role needs SELECT on idem.events, idem.keys and "
                                               "idem.key_archive; ask the database administrator.")
                                          : tr("Check the server's message below, then press Refresh.");
      break;
    default:
      // One next step, the same the message below names: an enforcer's start records a policy
      // but (as the service role) does not choose it; the store's administrator does.
      what = error.message.contains(u"no policy"_s) ? tr("This store has no policy in force yet.")
                                                    : tr("The tiers could not be measured.");
      next = error.message.contains(u"no policy"_s)
                 ? tr("Tiers follow the policy in force, which the store's administrator chooses with "
                      "idemctl policy activate FILE (the demo does this for you); then press Refresh.")
                 : tr("Press Refresh to try again.");
  }
  m_status->setText(m_report ? tr("Showing the last complete reading.") : tr("No numbers yet."));
  m_placeholder->setText(tr("<h3>Retention tiers</h3><p>No numbers to show yet — see the message above.</p>"));
  m_error->setText(u"<b>"_s % what.toHtmlEscaped() % u"</b> "_s % next.toHtmlEscaped() % u"<br><small>"_s %
                   error.message.toHtmlEscaped() % u"</small>"_s);
  m_error->setVisible(true);
}

void TiersWorkspace::askWhatIf(const QString& tier, qint64 ttlMs) {
  if (!m_report) return;
  const auto* t = m_report->tier(tier.toStdString());
  if (!t) return;
  const quint64 generation = ++m_whatIfGeneration;
  const tiers::TierReport copy = *t;
  const Millis since = m_report->since;
  m_session->submit<tiers::WhatIf>(
      this, [copy, ttlMs, since](pg::Connection& conn) { return tiers::whatIf(conn, copy, Millis(ttlMs), since); },
      [this, tier, generation](DbResult<tiers::WhatIf> result) {
        if (generation != m_whatIfGeneration) return;
        if (!result.ok()) {
          emit message(tr("The what-if for %1 could not be computed: %2").arg(tier, result.error.message));
          return;
        }
        m_whatIf->setWhatIf(tier, *result.value);
      });
}

void TiersWorkspace::readObserved(const std::string& service, Millis since) {
  const quint64 generation = ++m_observedGeneration;
  m_observedLoaded = false;
  m_observedService = service;
  m_session->submit<std::vector<tiers::ObservedRoute>>(
      this, [service, since](pg::Connection& conn) { return tiers::observedByRoute(conn, service, since); },
      [this, generation](DbResult<std::vector<tiers::ObservedRoute>> result) {
        if (generation != m_observedGeneration) return;
        m_observedLoaded = true;
        if (!result.ok()) {
          emit message(tr("What the observed routes would have done could not be read: %1").arg(result.error.message));
        } else {
          const bool any = !result.value->empty();
          long long total = 0;
          for (const auto& r : *result.value) total += r.total();
          m_bottom->setTabText(1, any ? tr("Rollout (observe): %1").arg(total) : tr("Rollout (observe)"));
          m_observed->setRoutes(std::move(*result.value));
          // The engineer rolling out comes for this: shown first the first time there is something.
          if (any && !m_rolloutTabShown) {
            m_rolloutTabShown = true;
            m_bottom->setCurrentWidget(m_observed);
            m_observed->pickLargest();  // and the requests behind the largest count
          }
        }
        emit observedLoadedNow();
      });
}

void TiersWorkspace::askObservedRequests(const QString& route, tiers::Would would) {
  const quint64 generation = m_observedGeneration;
  const Millis since(m_period->currentData().toLongLong());
  m_session->submit<std::vector<tiers::ObservedRequest>>(
      this,
      [service = m_observedService, route = route.toStdString(), would, since](pg::Connection& conn) {
        return tiers::observedRequests(conn, service, route, would, since);
      },
      [this, route, would, generation](DbResult<std::vector<tiers::ObservedRequest>> result) {
        if (generation != m_observedGeneration) return;  // the counts were read again meanwhile
        if (!result.ok()) {
          emit message(tr("The requests behind the count could not be read: %1").arg(result.error.message));
          return;
        }
        m_observed->setRequests(route, would, *result.value);
      });
}

bool TiersWorkspace::exportPng(const QString& path) { return m_report && saveChartPng(m_chart, path); }

bool TiersWorkspace::exportSvg(const QString& path) {
  return m_report && saveChartSvg(m_chart, path, tr("Retention tiers, policy v%1").arg(m_report->policyVersion));
}

DecisionSheet TiersWorkspace::decisionSheet() const {
  DecisionSheet sheet;
  sheet.report = *m_report;
  std::map<std::string, tiers::WhatIf> proposals;
  for (const auto& t : m_report->tiers) proposals[t.tier.name] = m_whatIf->proposal(t.tier.name);
  sheet.proposal = [proposals = std::move(proposals)](const std::string& tier) {
    auto it = proposals.find(tier);
    return it == proposals.end() ? tiers::WhatIf{} : it->second;
  };
  const auto& info = m_session->info();
  sheet.database = tr("database %1 on %2").arg(info.database, info.host.startsWith(u'/') ? u"local socket"_s : info.host);
  recordChart(m_chart, sheet);
  return sheet;
}

bool TiersWorkspace::exportPdf(const QString& path) { return m_report && writeDecisionPdf(decisionSheet(), path); }

void TiersWorkspace::exportPdfInBackground(const QString& path) {
  if (!m_report) {
    emit pdfExported(path, false);
    return;
  }
  runFileWork<bool>(
      this, [sheet = decisionSheet(), path] { return writeDecisionPdf(sheet, path); },
      [this, path](bool ok) { emit pdfExported(path, ok); });
}

void TiersWorkspace::chooseExport(const QString& kind) {
  const QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  const QString base = dir % u"/idem-tiers"_s % (kind == u"pdf"_s ? u"-decision"_s : QString()) % u"."_s % kind;
  const QString filter = kind == u"png"_s   ? tr("PNG image (*.png)")
                         : kind == u"svg"_s ? tr("SVG drawing (*.svg)")
                                            : tr("PDF document (*.pdf)");
  const QString path = QFileDialog::getSaveFileName(this, tr("Export"), base, filter);
  if (path.isEmpty()) return;
  if (kind == u"pdf"_s) {
    exportPdfInBackground(path);  // its end is reported by savedOrNot
    return;
  }
  savedOrNot(path, kind == u"png"_s ? exportPng(path) : exportSvg(path));
}

void TiersWorkspace::savedOrNot(const QString& path, bool ok) {
  emit message(ok ? tr("Saved %1").arg(path)
                  : tr("Could not write %1: check that the folder exists and is writable, then export again.").arg(path));
}

}  // namespace idem::ui
