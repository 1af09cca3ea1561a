#include "ui/keys/filterpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTimeEdit>
#include <QFormLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QPushButton>
#include <QTimer>

#include "ui/common/timezonesetting.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

FilterPanel::FilterPanel(QWidget* parent)
    : QWidget(parent), m_service(new QComboBox(this)), m_endpoint(new QComboBox(this)), m_tier(new QComboBox(this)), m_tenant(new QLineEdit(this)),
      m_fromOn(new QCheckBox(tr("from"), this)), m_from(new QDateTimeEdit(this)), m_toOn(new QCheckBox(tr("to"), this)),
      m_to(new QDateTimeEdit(this)), m_status(new QComboBox(this)), m_key(new QLineEdit(this)),
      m_prefix(new QCheckBox(tr("prefix"), this)), m_resource(new QLineEdit(this)),
      m_multi(new QCheckBox(tr("Executed more than once"), this)),
      m_stuck(new QCheckBox(tr("Stuck processing (lease expired)"), this)),
      m_duplicates(new QCheckBox(tr("Suspected duplicates (across keys)"), this)), m_debounce(new QTimer(this)) {
  m_service->setEditable(true);
  m_service->addItem(QString());
  m_service->lineEdit()->setPlaceholderText(tr("any service"));
  m_service->setToolTip(tr("Services sharing this store keep their own keys: the same key in two services is two keys"));
  m_endpoint->setEditable(true);
  m_endpoint->addItem(QString());
  m_endpoint->lineEdit()->setPlaceholderText(tr("any endpoint"));
  m_tier->setEditable(true);
  m_tier->addItem(QString());
  m_tier->lineEdit()->setPlaceholderText(tr("any tier"));
  m_tenant->setPlaceholderText(tr("any tenant"));
  m_status->addItems({tr("any status"), u"2xx"_s, u"4xx"_s, u"5xx"_s});
  m_key->setPlaceholderText(tr("exact key"));
  m_resource->setPlaceholderText(u"pay_…, re_…, ord_…"_s);
  for (auto* e : {m_from, m_to}) {
    e->setCalendarPopup(true);
    e->setDisplayFormat(u"yyyy-MM-dd HH:mm"_s);
    e->setDateTime(QDateTime::currentDateTime());
    e->setEnabled(false);
  }
  m_from->setDateTime(QDateTime::currentDateTime().addDays(-1));
  // The range is typed in the zone the console shows times in; the same instants stay chosen
  // when it changes.
  auto showInZone = [this] {
    const bool local = TimeZoneSetting::instance().zone() == DisplayZone::Local;
    const Qt::TimeSpec spec = local ? Qt::LocalTime : Qt::UTC;
    const QString zone = local ? tr("local time (%1)").arg(TimeZoneSetting::localZoneName()) : tr("UTC");
    for (auto* e : {m_from, m_to}) {
      const QSignalBlocker block(e);
      const QDateTime instant = e->dateTime();
      e->setTimeSpec(spec);
      e->setDateTime(instant.toTimeSpec(spec));
      e->setToolTip(tr("Created at, in %1").arg(zone));
    }
  };
  showInZone();
  connect(&TimeZoneSetting::instance(), &TimeZoneSetting::changed, this, showInZone);
  m_multi->setToolTip(tr("Keys whose operation ran more than once: executions in several generations, or a lease "
                         "taken over"));
  m_stuck->setToolTip(tr("Processing keys whose lease has run out: the executor probably died"));
  m_duplicates->setObjectName(u"suspectedDuplicatesFilter"_s);
  m_duplicates->setToolTip(tr("Requests that repeated another key's execution of the same request (a client that "
                              "made a new key for its retry), listed with the earlier key"));

  auto* form = new QFormLayout(this);
  form->setContentsMargins(0, 0, 0, 0);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->addRow(tr("Service"), m_service);
  form->addRow(tr("Endpoint"), m_endpoint);
  form->addRow(tr("Tier"), m_tier);
  form->addRow(tr("Tenant"), m_tenant);
  auto* from = new QHBoxLayout;
  from->addWidget(m_fromOn);
  from->addWidget(m_from, 1);
  auto* to = new QHBoxLayout;
  to->addWidget(m_toOn);
  to->addWidget(m_to, 1);
  form->addRow(tr("Created"), from);
  form->addRow(QString(), to);
  form->addRow(tr("Status"), m_status);
  auto* key = new QHBoxLayout;
  key->addWidget(m_key, 1);
  key->addWidget(m_prefix);
  form->addRow(tr("Key"), key);
  form->addRow(tr("Resource"), m_resource);
  form->addRow(m_multi);
  form->addRow(m_stuck);
  form->addRow(m_duplicates);
  auto* clearButton = new QPushButton(tr("Clear filters"), this);
  form->addRow(clearButton);

  m_debounce->setSingleShot(true);
  m_debounce->setInterval(350);
  connect(m_debounce, &QTimer::timeout, this, &FilterPanel::filterChanged);
  for (auto* e : {m_tenant, m_key, m_resource}) connect(e, &QLineEdit::textChanged, this, &FilterPanel::changed);
  for (auto* c : {m_service, m_endpoint, m_tier}) connect(c, &QComboBox::currentTextChanged, this, &FilterPanel::changed);
  connect(m_status, &QComboBox::currentIndexChanged, this, &FilterPanel::changed);
  for (auto* e : {m_from, m_to}) connect(e, &QDateTimeEdit::dateTimeChanged, this, &FilterPanel::changed);
  for (auto* b : {m_prefix, m_multi, m_stuck, m_duplicates}) connect(b, &QCheckBox::toggled, this, &FilterPanel::changed);
  connect(m_fromOn, &QCheckBox::toggled, m_from, &QWidget::setEnabled);
  connect(m_toOn, &QCheckBox::toggled, m_to, &QWidget::setEnabled);
  connect(m_fromOn, &QCheckBox::toggled, this, &FilterPanel::changed);
  connect(m_toOn, &QCheckBox::toggled, this, &FilterPanel::changed);
  connect(clearButton, &QPushButton::clicked, this, [this] {
    clear();
    emit filterChanged();
  });
}

void FilterPanel::changed() {
  if (!m_silent) m_debounce->start();
}

KeyFilter FilterPanel::apply(KeyFilter f) const {
  f.service = m_service->currentText().trimmed();
  f.endpoint = m_endpoint->currentText().trimmed();
  f.tier = m_tier->currentText().trimmed();
  f.tenant = m_tenant->text().trimmed();
  f.createdFrom = m_fromOn->isChecked() ? std::optional(m_from->dateTime()) : std::nullopt;
  f.createdTo = m_toOn->isChecked() ? std::optional(m_to->dateTime()) : std::nullopt;
  f.status = static_cast<StatusClass>(m_status->currentIndex());
  f.key = m_key->text().trimmed();
  f.keyPrefix = m_prefix->isChecked();
  f.resourceRef = m_resource->text().trimmed();
  f.executedMoreThanOnce = m_multi->isChecked();
  f.stuckProcessing = m_stuck->isChecked();
  f.suspectedDuplicates = m_duplicates->isChecked();
  return f;
}

void FilterPanel::setFilter(const KeyFilter& f) {
  m_silent = true;
  m_service->setCurrentText(f.service);
  m_endpoint->setCurrentText(f.endpoint);
  m_tier->setCurrentText(f.tier);
  m_tenant->setText(f.tenant);
  m_fromOn->setChecked(f.createdFrom.has_value());
  if (f.createdFrom) m_from->setDateTime(f.createdFrom->toTimeSpec(m_from->timeSpec()));
  m_toOn->setChecked(f.createdTo.has_value());
  if (f.createdTo) m_to->setDateTime(f.createdTo->toTimeSpec(m_to->timeSpec()));
  m_status->setCurrentIndex(static_cast<int>(f.status));
  m_key->setText(f.key);
  m_prefix->setChecked(f.keyPrefix);
  m_resource->setText(f.resourceRef);
  m_multi->setChecked(f.executedMoreThanOnce);
  m_stuck->setChecked(f.stuckProcessing);
  m_duplicates->setChecked(f.suspectedDuplicates);
  m_debounce->stop();
  m_silent = false;
}

void FilterPanel::clear() { setFilter(KeyFilter{}); }

void FilterPanel::setServices(const QStringList& services) {
  m_silent = true;
  const QString service = m_service->currentText();
  m_service->clear();
  m_service->addItem(QString());
  m_service->addItems(services);
  m_service->setCurrentText(service);
  m_silent = false;
}

void FilterPanel::setPolicy(const QString& policyJson) {
  const QJsonObject doc = QJsonDocument::fromJson(policyJson.toUtf8()).object();
  QStringList endpoints;
  QStringList tiers;
  for (const auto& t : doc.value(u"tiers"_s).toArray()) {
    const QJsonObject tier = t.toObject();
    tiers << tier.value(u"name"_s).toString();
    for (const auto& r : tier.value(u"routes"_s).toArray()) endpoints << r.toString();
  }
  m_silent = true;
  const QString endpoint = m_endpoint->currentText();
  const QString tier = m_tier->currentText();
  m_endpoint->clear();
  m_endpoint->addItem(QString());
  m_endpoint->addItems(endpoints);
  m_endpoint->setCurrentText(endpoint);
  m_tier->clear();
  m_tier->addItem(QString());
  m_tier->addItems(tiers);
  m_tier->setCurrentText(tier);
  m_silent = false;
}

}  // namespace idem::ui
