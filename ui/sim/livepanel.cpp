#include "ui/sim/livepanel.h"

#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/sim/comparisonmodel.h"
#include "ui/sim/livecomparisonmodel.h"
#include "ui/sim/liverunner.h"
#include "ui/sim/simrunner.h"

using namespace Qt::StringLiterals;
namespace core = idem::sim;

namespace idem::ui::sim {

QString LivePanel::defaultEndpoint() {
  const QString env = qEnvironmentVariable("IDEM_DEMO_ENDPOINT");
  if (!env.isEmpty()) return env;
  // idemctl demo writes demo.json (conninfo, endpoint, pid) while it runs.
  QString dataHome = qEnvironmentVariable("XDG_DATA_HOME");
  if (dataHome.isEmpty()) dataHome = QDir::homePath() + u"/.local/share"_s;
  QFile file(dataHome + u"/idem/demo/demo.json"_s);
  if (file.open(QIODevice::ReadOnly))
    return QJsonDocument::fromJson(file.readAll()).object().value(u"endpoint"_s).toString();
  return {};
}

LivePanel::LivePanel(ConfigProvider provider, QWidget* parent)
    : QWidget(parent),
      m_provider(std::move(provider)),
      m_nam(new QNetworkAccessManager(this)),
      m_live(new LiveRunner(this)),
      m_prediction(new SimRunner(this)),
      m_model(new LiveComparisonModel(this)),
      m_url(new QLineEdit(defaultEndpoint(), this)),
      m_read(new QPushButton(tr("Read policy"), this)),
      m_route(new QComboBox(this)),
      m_tier(new QLabel(this)),
      m_policy(new QComboBox(this)),
      m_tenant(new QLineEdit(u"acct_sim"_s, this)),
      m_clients(new QSpinBox(this)),
      m_operations(new QSpinBox(this)),
      m_compression(new QDoubleSpinBox(this)),
      m_mapping(new QLabel(this)),
      m_start(new QPushButton(tr("Start live run"), this)),
      m_cancel(new QPushButton(tr("Cancel"), this)),
      m_progress(new QProgressBar(this)),
      m_status(new QLabel(this)),
      m_table(new QTableView(this)),
      m_notes(new QLabel(this)),
      m_showKeys(new QPushButton(tr("Show these keys in Keys"), this)) {
  m_url->setPlaceholderText(tr("http://127.0.0.1:PORT — idemctl demo, or idemctl serve --allow-fault-injection"));
  m_route->addItems(liveRoutes());
  m_policy->addItems({tr("Policy A"), tr("Policy B")});
  m_clients->setRange(1, 64);
  m_clients->setValue(8);
  m_clients->setToolTip(tr("Concurrent clients; each runs one operation at a time with the policy"));
  m_operations->setRange(1, 20000);
  m_operations->setValue(200);
  m_compression->setRange(0.01, 1e6);
  m_compression->setDecimals(2);
  m_compression->setValue(60);
  m_compression->setToolTip(
      tr("Model seconds per live second: client durations run k times faster, the endpoint's "
         "TTL and Retry-After stand for k times longer in the model"));
  m_tier->setWordWrap(true);
  m_mapping->setWordWrap(true);
  m_mapping->setTextFormat(Qt::RichText);
  m_notes->setWordWrap(true);
  m_status->setWordWrap(true);
  m_cancel->setEnabled(false);
  m_showKeys->setEnabled(false);
  m_table->setModel(m_model);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->setObjectName(u"liveTable"_s);

  auto* layout = new QVBoxLayout(this);
  auto* settings = new QGroupBox(tr("Live run against the embedded endpoint"), this);
  auto* form = new QFormLayout(settings);
  auto* urlRow = new QHBoxLayout;
  urlRow->addWidget(m_url, 1);
  urlRow->addWidget(m_read);
  form->addRow(tr("Endpoint"), urlRow);
  auto* routeRow = new QHBoxLayout;
  routeRow->addWidget(m_route);
  routeRow->addWidget(m_tier, 1);
  form->addRow(tr("Route"), routeRow);
  auto* who = new QHBoxLayout;
  who->addWidget(m_policy);
  who->addWidget(new QLabel(tr("tenant"), this));
  who->addWidget(m_tenant);
  who->addWidget(new QLabel(tr("clients"), this));
  who->addWidget(m_clients);
  who->addWidget(new QLabel(tr("operations"), this));
  who->addWidget(m_operations);
  who->addStretch(1);
  form->addRow(tr("Run"), who);
  form->addRow(tr("Time compression k"), m_compression);
  form->addRow(m_mapping);
  layout->addWidget(settings);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_start);
  buttons->addWidget(m_cancel);
  buttons->addWidget(m_progress, 1);
  buttons->addWidget(m_showKeys);
  layout->addLayout(buttons);
  layout->addWidget(m_status);
  layout->addWidget(m_table, 1);
  layout->addWidget(m_notes);

  connect(m_read, &QPushButton::clicked, this, &LivePanel::readPolicy);
  connect(m_url, &QLineEdit::editingFinished, this, [this] { m_endpointPolicy.reset(); });
  connect(m_start, &QPushButton::clicked, this, &LivePanel::start);
  connect(m_cancel, &QPushButton::clicked, this, &LivePanel::cancel);
  connect(m_showKeys, &QPushButton::clicked, this, [this] { emit keysRequested(m_lastPrefix); });
  for (auto* c : {m_route, m_policy}) connect(c, &QComboBox::currentIndexChanged, this, &LivePanel::updateMapping);
  connect(m_compression, &QDoubleSpinBox::valueChanged, this, &LivePanel::updateMapping);
  connect(m_live, &LiveRunner::progress, this, [this](int done, int total, const QString& what) {
    m_progress->setRange(0, std::max(1, total));
    m_progress->setValue(done);
    m_status->setText(tr("Live: %1 — %2 of %3").arg(what).arg(done).arg(total));
  });
  connect(m_live, &LiveRunner::finished, this, [this](bool cancelled) {
    m_liveDone = true;
    const LiveResult& r = m_live->result();
    m_model->setLive(r);
    QString text = cancelled ? tr("Live run cancelled after %1 operations.").arg(r.operations)
                             : tr("Live run done: %1 operations in %2 (keys %3*, tenant %4).")
                                   .arg(r.operations)
                                   .arg(formatSeconds(r.elapsedS), r.keyPrefix, m_tenant->text());
    if (!r.firstError.isEmpty())
      text += u" "_s + tr("Unexpected answer: %1 — check that the endpoint runs with --allow-fault-injection and "
                          "that the route belongs to a keyed tier.")
                           .arg(r.firstError);
    m_status->setText(text);
    maybeFinished();
  });
  connect(m_prediction, &SimRunner::finished, this, [this](bool) {
    m_predictionDone = true;
    if (!m_prediction->results().isEmpty()) m_model->setPrediction(m_prediction->results().first());
    maybeFinished();
  });
  updateMapping();
}

void LivePanel::setEndpoint(const QString& url) {
  m_url->setText(url);
  m_endpointPolicy.reset();
}

void LivePanel::readPolicy() {
  QUrl url(m_url->text().trimmed());
  if (!url.isValid() || url.host().isEmpty()) {
    m_status->setText(
        tr("No endpoint: start `idemctl demo` (or `idemctl serve --allow-fault-injection`) and enter the "
           "URL it prints, e.g. http://127.0.0.1:8080."));
    m_startAfterRead = false;
    emit policyRead(false);
    return;
  }
  url.setPath(u"/idempotency"_s);
  QNetworkRequest request(url);
  request.setRawHeader("Accept", "application/json");
  request.setTransferTimeout(5000);
  QNetworkReply* reply = m_nam->get(request);
  m_status->setText(tr("Reading the policy from %1…").arg(url.toString()));
  connect(reply, &QNetworkReply::finished, this, [this, reply] {
    reply->deleteLater();
    QString error;
    std::optional<EndpointPolicy> policy;
    if (reply->error() != QNetworkReply::NoError)
      error = tr("The endpoint did not answer (%1). Is `idemctl demo` or `idemctl serve` running at that address?")
                  .arg(reply->errorString());
    else
      policy = parseEndpointPolicy(reply->readAll(), &error);
    m_endpointPolicy = policy;
    m_status->setText(policy ? tr("Policy read: %n tier(s).", nullptr, static_cast<int>(policy->tiers.size())) : error);
    updateMapping();
    emit policyRead(policy.has_value());
    if (std::exchange(m_startAfterRead, false)) {
      if (policy)
        begin();
      else
        emit finished();
    }
  });
}

LiveSettings LivePanel::settings() const {
  LiveSettings s;
  s.endpoint = QUrl(m_url->text().trimmed());
  s.route = m_route->currentText();
  s.tenant = m_tenant->text().trimmed().isEmpty() ? u"acct_sim"_s : m_tenant->text().trimmed();
  s.clients = m_clients->value();
  s.operations = m_operations->value();
  s.compression = m_compression->value();
  if (m_endpointPolicy) {
    if (!m_endpointPolicy->tenantHeader.isEmpty()) s.tenantHeader = m_endpointPolicy->tenantHeader;
    if (const EndpointTier* t = m_endpointPolicy->tierFor(s.route)) s.tier = *t;
  }
  return s;
}

void LivePanel::updateMapping() {
  const LiveSettings s = settings();
  const double k = s.compression;
  auto live = [k](core::Usec d) { return formatSeconds(core::toSeconds(d) / k); };
  auto model = [k](core::Usec d) { return formatSeconds(core::toSeconds(d) * k); };
  QString text = tr("k = %1: one live second stands for %2 of model time.").arg(k).arg(formatSeconds(k));
  if (auto config = m_provider ? m_provider(m_policy->currentIndex()) : std::nullopt) {
    const core::Policy& p = config->policy;
    text += u" "_s + tr("Client live: timeout %1, backoff base %2, cap %3; server latency median %4.")
                         .arg(p.timeout ? live(*p.timeout) : tr("none"), live(p.base),
                              p.cap ? live(*p.cap) : tr("none"), live(config->server.latencyMedian));
  }
  if (m_endpointPolicy) {
    if (const EndpointTier* t = m_endpointPolicy->tierFor(s.route)) {
      m_tier->setText(tr("tier <b>%1</b>: TTL %2, lease %3, on conflict %4")
                          .arg(t->name.toHtmlEscaped(), formatSeconds(core::toSeconds(t->ttl)),
                               formatSeconds(core::toSeconds(t->lease)), t->onConflict));
      text += u" "_s + tr("Endpoint's TTL %1 → model TTL <b>%2</b>; its Retry-After 1 s → %3.")
                           .arg(formatSeconds(core::toSeconds(t->ttl)), model(t->ttl), model(core::kUsecPerSecond));
    } else {
      m_tier->setText(tr("no tier of this endpoint covers POST %1").arg(s.route));
    }
  } else {
    m_tier->setText(tr("(read the endpoint's policy to see the tier)"));
  }
  m_mapping->setText(text);
}

void LivePanel::start() {
  if (m_live->isRunning()) return;
  if (!m_endpointPolicy) {
    m_startAfterRead = true;
    readPolicy();
    return;
  }
  begin();
}

void LivePanel::begin() {
  const LiveSettings base = settings();
  if (!m_endpointPolicy->tierFor(base.route)) {
    m_status->setText(tr("No tier of this endpoint covers POST %1, so its keys would not be enforced. Pick another "
                         "route.")
                          .arg(base.route));
    emit finished();
    return;
  }
  const int which = m_policy->currentIndex();
  const auto config = m_provider ? m_provider(which) : std::nullopt;
  if (!config) {
    m_status->setText(tr("Fix the fields marked red in the policy or server editors, then start again."));
    emit finished();
    return;
  }
  LiveSettings s = base;
  s.keyPrefix = u"sim-"_s % QDateTime::currentDateTime().toString(u"yyyyMMdd-HHmmss"_s) % u"-"_s %
                (which == 0 ? u"A"_s : u"B"_s) % u"-"_s;
  m_lastPrefix = s.keyPrefix;
  const LivePlan plan = planLive(*config, s);
  m_notes->setText(plan.notes.isEmpty()
                       ? tr("Every model setting is driven live.")
                       : tr("Not driven live, and left out of the prediction: %1.").arg(plan.notes.join(u"; "_s)));
  m_model->clear();
  m_liveDone = m_predictionDone = false;
  setBusy(true);
  m_prediction->start({plan.prediction});
  m_live->start(s, plan);
}

void LivePanel::cancel() {
  m_startAfterRead = false;
  m_prediction->cancel();
  m_live->cancel();
}

void LivePanel::maybeFinished() {
  if (!m_liveDone || !m_predictionDone) return;
  setBusy(false);
  m_showKeys->setEnabled(!m_lastPrefix.isEmpty());
  emit finished();
}

void LivePanel::setBusy(bool busy) {
  m_start->setEnabled(!busy);
  m_cancel->setEnabled(busy);
  m_read->setEnabled(!busy);
  if (!busy) m_progress->setValue(m_progress->maximum());
}

}  // namespace idem::ui::sim
