#include "ui/sim/servereditor.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QSpinBox>
#include <QVBoxLayout>

#include "ui/sim/durationedit.h"
#include "ui/sim/numberbox.h"

using namespace Qt::StringLiterals;
namespace core = idem::sim;

namespace idem::ui::sim {
ServerEditor::ServerEditor(QWidget* parent)
    : QWidget(parent),
      m_seed(new QSpinBox(this)),
      m_operations(new QSpinBox(this)),
      m_rate(numberBox(0.01, 1e6, 2, tr(" /s"), this)),
      m_median(new DurationEdit(false, this)),
      m_p99(new DurationEdit(false, this)),
      m_failure(numberBox(0, 100, 2, tr(" %"), this)),
      m_failureStatus(new QComboBox(this)),
      m_connectionErrors(numberBox(0, 100, 2, tr(" %"), this)),
      m_lost(numberBox(0, 100, 2, tr(" %"), this)),
      m_capacity(numberBox(0, 1e7, 0, tr(" req/s"), this)),
      m_retryAfter(new DurationEdit(false, this)),
      m_conflictRetryAfter(new DurationEdit(false, this)),
      m_event(new QComboBox(this)),
      m_eventAt(new DurationEdit(false, this)),
      m_eventDuration(new DurationEdit(false, this)),
      m_extraRate(numberBox(0, 1e6, 1, tr(" /s"), this)),
      m_outageFraction(numberBox(0, 100, 1, tr(" %"), this)),
      m_outageAnswer(new QComboBox(this)),
      m_eventRetryAfter(new DurationEdit(true, this)),
      m_eventFailure(numberBox(0, 100, 2, tr(" %"), this)),
      m_ttl(new DurationEdit(false, this)),
      m_lease(new DurationEdit(true, this)),
      m_purgeLag(new DurationEdit(false, this)),
      m_storedAt(new QComboBox(this)) {
  m_seed->setRange(0, 2147483647);
  m_operations->setRange(1, 100000000);
  m_operations->setGroupSeparatorShown(true);
  m_capacity->setSpecialValueText(tr("unlimited"));
  m_failureStatus->addItems({tr("500"), tr("503 + Retry-After")});
  m_event->addItems({tr("none"), tr("spike (extra arrivals)"), tr("outage (fast 503s)"), tr("failure window")});
  m_event->setObjectName(u"event"_s);
  m_outageAnswer->addItems({tr("503 + Retry-After"), tr("connection error")});
  m_storedAt->addItems({tr("first receipt (409 while processing)"), tr("completion")});
  for (QComboBox* c : {m_failureStatus, m_event, m_outageAnswer, m_storedAt}) {
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(12);
  }

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* clients = new QGroupBox(tr("Clients"), this);
  auto* cf = new QFormLayout(clients);
  cf->addRow(tr("Operations"), m_operations);
  cf->addRow(tr("Arrival rate"), m_rate);
  cf->addRow(tr("Seed"), m_seed);
  layout->addWidget(clients);

  auto* server = new QGroupBox(tr("Server"), this);
  auto* sf = new QFormLayout(server);
  sf->addRow(tr("Latency median"), m_median);
  sf->addRow(tr("Latency p99"), m_p99);
  sf->addRow(tr("Failure rate"), m_failure);
  sf->addRow(tr("Failure answer"), m_failureStatus);
  sf->addRow(tr("Connection errors"), m_connectionErrors);
  sf->addRow(tr("Answers lost"), m_lost);
  sf->addRow(tr("Capacity"), m_capacity);
  sf->addRow(tr("503 Retry-After"), m_retryAfter);
  sf->addRow(tr("409 Retry-After"), m_conflictRetryAfter);
  layout->addWidget(server);

  auto* event = new QGroupBox(tr("Spike / outage"), this);
  auto* ef = new QFormLayout(event);
  ef->addRow(tr("Event"), m_event);
  ef->addRow(tr("At"), m_eventAt);
  ef->addRow(tr("Lasting"), m_eventDuration);
  ef->addRow(tr("Extra arrivals"), m_extraRate);
  ef->addRow(tr("Attempts failed"), m_outageFraction);
  ef->addRow(tr("Outage answer"), m_outageAnswer);
  ef->addRow(tr("Its Retry-After"), m_eventRetryAfter);
  ef->addRow(tr("Failure rate"), m_eventFailure);
  layout->addWidget(event);

  auto* store = new QGroupBox(tr("Key store"), this);
  auto* kf = new QFormLayout(store);
  kf->addRow(tr("TTL"), m_ttl);
  kf->addRow(tr("Lease"), m_lease);
  kf->addRow(tr("Purge lag"), m_purgeLag);
  kf->addRow(tr("Key stored at"), m_storedAt);
  layout->addWidget(store);
  layout->addStretch(1);

  for (auto* d : {m_median, m_p99, m_retryAfter, m_conflictRetryAfter, m_eventAt, m_eventDuration, m_eventRetryAfter,
                  m_ttl, m_lease, m_purgeLag})
    connect(d, &DurationEdit::durationChanged, this, &ServerEditor::changed);
  for (auto* s :
       {m_rate, m_failure, m_connectionErrors, m_lost, m_capacity, m_extraRate, m_outageFraction, m_eventFailure})
    connect(s, &QDoubleSpinBox::valueChanged, this, &ServerEditor::changed);
  for (auto* s : {m_seed, m_operations}) connect(s, &QSpinBox::valueChanged, this, &ServerEditor::changed);
  for (auto* c : {m_failureStatus, m_event, m_outageAnswer, m_storedAt})
    connect(c, &QComboBox::currentIndexChanged, this, &ServerEditor::changed);
  connect(m_event, &QComboBox::currentIndexChanged, this, &ServerEditor::updateEnabled);

  setConfig(core::SimConfig{});
}

void ServerEditor::setConfig(const core::SimConfig& c) {
  const QSignalBlocker block(this);
  m_seed->setValue(static_cast<int>(std::min<std::uint64_t>(c.seed, 2147483647)));
  m_operations->setValue(static_cast<int>(std::min<std::int64_t>(c.clients.operations, 100000000)));
  m_rate->setValue(c.clients.arrivalRatePerSecond);
  m_median->setDuration(c.server.latencyMedian);
  m_p99->setDuration(c.server.latencyP99);
  m_failure->setValue(100 * c.server.failureRate);
  m_failureStatus->setCurrentIndex(c.server.failureStatus == 503 ? 1 : 0);
  m_connectionErrors->setValue(100 * c.server.connectionErrorRate);
  m_lost->setValue(100 * c.server.lostResponseRate);
  m_capacity->setValue(c.server.capacityRps);
  m_retryAfter->setDuration(c.server.retryAfter);
  m_conflictRetryAfter->setDuration(c.server.conflictRetryAfter);
  const core::ServerEvent e = c.server.events.empty() ? core::ServerEvent{} : c.server.events.front();
  m_event->setCurrentIndex(c.server.events.empty()    ? NoEvent
                           : e.outage                 ? Outage
                           : e.extraRatePerSecond > 0 ? Spike
                                                      : FailureWindow);
  m_eventAt->setDuration(e.at);
  m_eventDuration->setDuration(e.duration);
  m_extraRate->setValue(e.extraRatePerSecond);
  m_outageFraction->setValue(100 * e.outageFraction);
  m_outageAnswer->setCurrentIndex(e.outageConnectionError ? 1 : 0);
  m_eventRetryAfter->setDuration(e.retryAfter);
  m_eventFailure->setValue(100 * e.failureRate.value_or(0));
  m_ttl->setDuration(c.store.ttl);
  m_lease->setDuration(c.store.lease);
  m_purgeLag->setDuration(c.store.purgeLag);
  m_storedAt->setCurrentIndex(c.store.storedAt == core::Store::StoredAt::Completion ? 1 : 0);
  updateEnabled();
}

core::SimConfig ServerEditor::config(const core::Policy& policy) const {
  core::SimConfig c;
  c.seed = static_cast<std::uint64_t>(m_seed->value());
  c.clients.operations = m_operations->value();
  c.clients.arrivalRatePerSecond = m_rate->value();
  c.policy = policy;
  auto& s = c.server;
  s.latencyMedian = m_median->durationOr(s.latencyMedian);
  s.latencyP99 = std::max(s.latencyMedian, m_p99->durationOr(s.latencyP99));
  s.failureRate = m_failure->value() / 100;
  s.failureStatus = m_failureStatus->currentIndex() == 1 ? 503 : 500;
  s.connectionErrorRate = m_connectionErrors->value() / 100;
  s.lostResponseRate = m_lost->value() / 100;
  s.capacityRps = m_capacity->value();
  s.retryAfter = m_retryAfter->durationOr(s.retryAfter);
  s.conflictRetryAfter = m_conflictRetryAfter->durationOr(s.conflictRetryAfter);
  if (m_event->currentIndex() != NoEvent) {
    core::ServerEvent e;
    e.at = m_eventAt->durationOr(0);
    e.duration = m_eventDuration->durationOr(0);
    switch (m_event->currentIndex()) {
      case Spike:
        e.extraRatePerSecond = m_extraRate->value();
        break;
      case Outage:
        e.outage = true;
        e.outageFraction = m_outageFraction->value() / 100;
        e.outageConnectionError = m_outageAnswer->currentIndex() == 1;
        e.retryAfter = m_eventRetryAfter->duration();
        break;
      default:
        e.failureRate = m_eventFailure->value() / 100;
    }
    s.events.push_back(e);
  }
  c.store.ttl = m_ttl->durationOr(c.store.ttl);
  c.store.lease = m_lease->duration();
  c.store.purgeLag = m_purgeLag->durationOr(0);
  c.store.storedAt =
      m_storedAt->currentIndex() == 1 ? core::Store::StoredAt::Completion : core::Store::StoredAt::FirstReceipt;
  return c;
}

QStringList ServerEditor::invalidFields() const {
  QStringList bad;
  const std::pair<DurationEdit*, QString> edits[] = {{m_median, tr("latency median")},
                                                     {m_p99, tr("latency p99")},
                                                     {m_retryAfter, tr("503 Retry-After")},
                                                     {m_conflictRetryAfter, tr("409 Retry-After")},
                                                     {m_eventAt, tr("event start")},
                                                     {m_eventDuration, tr("event duration")},
                                                     {m_eventRetryAfter, tr("event Retry-After")},
                                                     {m_ttl, tr("TTL")},
                                                     {m_lease, tr("lease")},
                                                     {m_purgeLag, tr("purge lag")}};
  for (const auto& [edit, name] : edits)
    if (!edit->isValid()) bad << name;
  return bad;
}

void ServerEditor::updateEnabled() {
  const int e = m_event->currentIndex();
  m_eventAt->setEnabled(e != NoEvent);
  m_eventDuration->setEnabled(e != NoEvent);
  m_extraRate->setEnabled(e == Spike);
  m_outageFraction->setEnabled(e == Outage);
  m_outageAnswer->setEnabled(e == Outage);
  m_eventRetryAfter->setEnabled(e == Outage);
  m_eventFailure->setEnabled(e == FailureWindow);
}

}  // namespace idem::ui::sim
