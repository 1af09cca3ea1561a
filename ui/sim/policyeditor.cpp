#include "ui/sim/policyeditor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>

#include "core/sim/presets.h"
#include "ui/sim/durationedit.h"
#include "ui/sim/numberbox.h"

using namespace Qt::StringLiterals;
namespace core = idem::sim;

namespace idem::ui::sim {
namespace {

enum BudgetChoice { NoBudget, GrpcBucket, AwsBucket, RatioBudget };

QString presetTitle(const core::Preset& p) {
  return QString::fromUtf8(p.title.data(), static_cast<qsizetype>(p.title.size()));
}

}  // namespace

PolicyEditor::PolicyEditor(QWidget* parent)
    : QWidget(parent),
      m_preset(new QComboBox(this)),
      m_source(new QLabel(this)),
      m_attempts(new QSpinBox(this)),
      m_timeout(new DurationEdit(true, this)),
      m_deadline(new DurationEdit(true, this)),
      m_backoff(new QComboBox(this)),
      m_jitter(new QComboBox(this)),
      m_base(new DurationEdit(false, this)),
      m_multiplier(numberBox(1, 1000, 2, QString(), this, 110)),
      m_cap(new DurationEdit(true, this)),
      m_minDelay(new DurationEdit(false, this)),
      m_firstImmediate(new QCheckBox(tr("first retry immediately"), this)),
      m_retryTimeout(new QCheckBox(tr("timeout"), this)),
      m_retryConnection(new QCheckBox(tr("conn. error"), this)),
      m_retry409(new QCheckBox(tr("409"), this)),
      m_retry500(new QCheckBox(tr("500"), this)),
      m_retry503(new QCheckBox(tr("503"), this)),
      m_retryAfter(new QComboBox(this)),
      m_retryAfterCap(new DurationEdit(true, this)),
      m_overCap(new QComboBox(this)),
      m_budget(new QComboBox(this)),
      m_maxTokens(numberBox(1, 1e6, 0, QString(), this, 110)),
      m_ratio(numberBox(0, 100, 3, QString(), this, 110)),
      m_retryCost(numberBox(0, 1e6, 1, QString(), this, 110)),
      m_timeoutCost(numberBox(0, 1e6, 1, QString(), this, 110)),
      m_successCredit(numberBox(0, 1e6, 1, QString(), this, 110)),
      m_window(new DurationEdit(false, this)),
      m_minRetries(numberBox(0, 1e6, 2, QString(), this, 110)) {
  m_preset->setObjectName(u"preset"_s);
  m_preset->addItem(tr("Custom policy"), QString());
  for (const auto& p : core::presets())
    m_preset->addItem(presetTitle(p), QString::fromUtf8(p.name.data(), static_cast<qsizetype>(p.name.size())));
  m_source->setWordWrap(true);
  m_source->setStyleSheet(u"color: palette(mid);"_s);
  m_attempts->setRange(1, 100);
  m_attempts->setToolTip(tr("Attempts including the first"));
  m_backoff->addItems({tr("none"), tr("constant"), tr("linear"), tr("exponential")});
  m_jitter->addItems({tr("none"), tr("full"), tr("equal"), tr("decorrelated")});
  m_jitter->setToolTip(
      tr("Brooker, \"Exponential Backoff And Jitter\": full = random(0, b); equal = b/2 + "
         "random(0, b/2); decorrelated = min(cap, random(base, 3 × previous))"));
  m_retryAfter->addItems({tr("ignore"), tr("max(backoff, Retry-After)"), tr("sleep Retry-After")});
  // In core::OverCap's order: the index is the value.
  m_overCap->addItems({tr("clamp to cap"), tr("ignore the header"), tr("give up the call")});
  m_budget->addItems({tr("none"), tr("token bucket (gRPC)"), tr("token bucket (AWS)"), tr("ratio (SRE)")});
  // Long preset titles must not widen the editor past its scroll area.
  for (QComboBox* c : {m_preset, m_backoff, m_jitter, m_retryAfter, m_overCap, m_budget}) {
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(12);
  }
  m_source->setMinimumWidth(50);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* top = new QFormLayout;
  top->addRow(tr("Preset"), m_preset);
  top->addRow(m_source);
  layout->addLayout(top);

  auto* attempts = new QGroupBox(tr("Attempts"), this);
  auto* af = new QFormLayout(attempts);
  af->addRow(tr("Max attempts"), m_attempts);
  af->addRow(tr("Per-attempt timeout"), m_timeout);
  af->addRow(tr("Deadline"), m_deadline);
  layout->addWidget(attempts);

  auto* backoff = new QGroupBox(tr("Backoff"), this);
  auto* bf = new QFormLayout(backoff);
  bf->addRow(tr("Curve"), m_backoff);
  bf->addRow(tr("Jitter"), m_jitter);
  bf->addRow(tr("Base"), m_base);
  bf->addRow(tr("Multiplier"), m_multiplier);
  bf->addRow(tr("Cap"), m_cap);
  bf->addRow(tr("Floor"), m_minDelay);
  bf->addRow(m_firstImmediate);
  layout->addWidget(backoff);

  auto* retry = new QGroupBox(tr("Retried outcomes and Retry-After"), this);
  auto* rf = new QFormLayout(retry);
  m_retryConnection->setToolTip(tr("connection error: the attempt never reached the server, or its answer was lost"));
  auto* on = new QGridLayout;
  on->addWidget(m_retryTimeout, 0, 0);
  on->addWidget(m_retryConnection, 0, 1, 1, 2);
  on->addWidget(m_retry409, 1, 0);
  on->addWidget(m_retry500, 1, 1);
  on->addWidget(m_retry503, 1, 2);
  rf->addRow(tr("Retry on"), on);
  rf->addRow(tr("Retry-After"), m_retryAfter);
  rf->addRow(tr("Obeyed up to"), m_retryAfterCap);
  rf->addRow(tr("Above that"), m_overCap);
  layout->addWidget(retry);

  auto* budget = new QGroupBox(tr("Retry budget"), this);
  auto* uf = new QFormLayout(budget);
  uf->addRow(tr("Kind"), m_budget);
  uf->addRow(tr("Max tokens"), m_maxTokens);
  uf->addRow(tr("Ratio"), m_ratio);
  uf->addRow(tr("Retry cost"), m_retryCost);
  uf->addRow(tr("Timeout cost"), m_timeoutCost);
  uf->addRow(tr("Success credit"), m_successCredit);
  uf->addRow(tr("Window"), m_window);
  uf->addRow(tr("Min retries/s"), m_minRetries);
  layout->addWidget(budget);
  layout->addStretch(1);

  connect(m_preset, &QComboBox::activated, this, [this](int index) {
    if (index > 0)
      applyPreset(m_preset->itemData(index).toString());
    else
      edited();
  });
  for (auto* d : {m_timeout, m_deadline, m_base, m_cap, m_minDelay, m_retryAfterCap, m_window})
    connect(d, &DurationEdit::durationChanged, this, &PolicyEditor::edited);
  for (auto* c : {m_backoff, m_jitter, m_retryAfter, m_overCap, m_budget})
    connect(c, &QComboBox::currentIndexChanged, this, &PolicyEditor::edited);
  for (auto* c : {m_firstImmediate, m_retryTimeout, m_retryConnection, m_retry409, m_retry500, m_retry503})
    connect(c, &QCheckBox::toggled, this, &PolicyEditor::edited);
  connect(m_attempts, &QSpinBox::valueChanged, this, &PolicyEditor::edited);
  for (auto* s : {m_multiplier, m_maxTokens, m_ratio, m_retryCost, m_timeoutCost, m_successCredit, m_minRetries})
    connect(s, &QDoubleSpinBox::valueChanged, this, &PolicyEditor::edited);

  setPolicy(core::Policy{});
}

bool PolicyEditor::applyPreset(const QString& name) {
  const core::Preset* p = core::findPreset(name.toStdString());
  if (!p) return false;
  setPolicy(p->policy);
  return true;
}

void PolicyEditor::setPolicy(const core::Policy& p) {
  m_loading = true;
  m_measuredFrom.clear();
  // findPreset resolves old names ("stripe" is stripe-python): the list holds current ones.
  const core::Preset* preset = core::findPreset(p.preset);
  const int index =
      preset ? m_preset->findData(QString::fromUtf8(preset->name.data(), static_cast<qsizetype>(preset->name.size())))
             : -1;
  m_preset->setCurrentIndex(std::max(index, 0));
  if (preset)
    m_source->setText(
        tr("Defaults from %1")
            .arg(QString::fromUtf8(preset->source.data(), static_cast<qsizetype>(preset->source.size()))));
  else
    m_source->setText(tr("Every field as you set it."));
  m_attempts->setValue(p.maxAttempts);
  m_timeout->setDuration(p.timeout);
  m_deadline->setDuration(p.deadline);
  m_backoff->setCurrentIndex(static_cast<int>(p.backoff));
  m_jitter->setCurrentIndex(static_cast<int>(p.jitter));
  m_base->setDuration(p.base);
  m_multiplier->setValue(p.multiplier);
  m_cap->setDuration(p.cap);
  m_minDelay->setDuration(p.minDelay);
  m_firstImmediate->setChecked(p.firstRetryImmediate);
  m_retryTimeout->setChecked((p.retryOn & core::kTimeout) != 0);
  m_retryConnection->setChecked((p.retryOn & core::kConnectionError) != 0);
  m_retry409->setChecked((p.retryOn & core::kConflict409) != 0);
  m_retry500->setChecked((p.retryOn & core::kStatus500) != 0);
  m_retry503->setChecked((p.retryOn & core::kStatus503) != 0);
  m_retryAfter->setCurrentIndex(static_cast<int>(p.retryAfter));
  m_retryAfterCap->setDuration(p.retryAfterCap);
  m_overCap->setCurrentIndex(static_cast<int>(p.overCap));
  const auto& b = p.budget;
  m_budget->setCurrentIndex(b.type == core::Budget::Type::None    ? NoBudget
                            : b.type == core::Budget::Type::Ratio ? RatioBudget
                            : b.style == core::Budget::Style::Aws ? AwsBucket
                                                                  : GrpcBucket);
  m_maxTokens->setValue(b.maxTokens);
  m_ratio->setValue(b.ratio);
  m_retryCost->setValue(b.retryCost);
  m_timeoutCost->setValue(b.timeoutCost);
  m_successCredit->setValue(b.successCredit);
  m_window->setDuration(b.window);
  m_minRetries->setValue(b.minRetriesPerSecond);
  m_edited = false;
  m_loading = false;
  updateEnabled();
  emit changed();
}

void PolicyEditor::setMeasuredPolicy(const core::Policy& policy, const QString& client) {
  core::Policy p = policy;
  p.preset.clear();  // fitted, not a preset's: "Custom" in the list
  setPolicy(p);
  m_measuredFrom = client;
  m_source->setText(tr("Fitted to what %1 was measured doing (the Measure tab).").arg(client));
  emit changed();
}

core::Policy PolicyEditor::policy() const {
  core::Policy p;
  p.preset = m_preset->currentData().toString().toStdString();
  p.maxAttempts = m_attempts->value();
  p.timeout = m_timeout->duration();
  p.deadline = m_deadline->duration();
  p.backoff = static_cast<core::Backoff>(m_backoff->currentIndex());
  p.jitter = static_cast<core::Jitter>(m_jitter->currentIndex());
  p.base = m_base->durationOr(0);
  p.multiplier = m_multiplier->value();
  p.cap = m_cap->duration();
  p.minDelay = m_minDelay->durationOr(0);
  p.firstRetryImmediate = m_firstImmediate->isChecked();
  p.retryOn = (m_retryTimeout->isChecked() ? core::kTimeout : 0U) |
              (m_retryConnection->isChecked() ? core::kConnectionError : 0U) |
              (m_retry409->isChecked() ? core::kConflict409 : 0U) | (m_retry500->isChecked() ? core::kStatus500 : 0U) |
              (m_retry503->isChecked() ? core::kStatus503 : 0U);
  p.retryAfter = static_cast<core::RetryAfterMode>(m_retryAfter->currentIndex());
  p.retryAfterCap = m_retryAfterCap->duration();
  p.overCap = static_cast<core::OverCap>(m_overCap->currentIndex());
  auto& b = p.budget;
  switch (m_budget->currentIndex()) {
    case GrpcBucket:
      b.type = core::Budget::Type::TokenBucket;
      b.style = core::Budget::Style::Grpc;
      break;
    case AwsBucket:
      b.type = core::Budget::Type::TokenBucket;
      b.style = core::Budget::Style::Aws;
      break;
    case RatioBudget:
      b.type = core::Budget::Type::Ratio;
      break;
    default:
      b.type = core::Budget::Type::None;
  }
  b.maxTokens = m_maxTokens->value();
  b.ratio = m_ratio->value();
  b.retryCost = m_retryCost->value();
  b.timeoutCost = m_timeoutCost->value();
  b.successCredit = m_successCredit->value();
  b.window = m_window->durationOr(10 * core::kUsecPerSecond);
  b.minRetriesPerSecond = m_minRetries->value();
  return p;
}

QString PolicyEditor::title() const {
  if (!m_measuredFrom.isEmpty()) {
    // The library and version: a User-Agent's first token.
    const QString client = m_measuredFrom.section(u' ', 0, 0);
    return m_edited ? tr("%1 (edited)").arg(client) : tr("Measured %1").arg(client);
  }
  if (m_preset->currentIndex() <= 0)
    return m_backoff->currentIndex() == 0
               ? tr("Custom, no backoff")
               : tr("Custom, %1 backoff, %2 jitter").arg(m_backoff->currentText(), m_jitter->currentText());
  const QString name = m_preset->currentData().toString();
  return m_edited ? tr("%1 (edited)").arg(name) : m_preset->currentText().section(u" ("_s, 0, 0);
}

QStringList PolicyEditor::invalidFields() const {
  QStringList bad;
  const std::pair<DurationEdit*, QString> edits[] = {
      {m_timeout, tr("timeout")},     {m_deadline, tr("deadline")},
      {m_base, tr("base")},           {m_cap, tr("cap")},
      {m_minDelay, tr("floor")},      {m_retryAfterCap, tr("Retry-After cap")},
      {m_window, tr("budget window")}};
  for (const auto& [edit, name] : edits)
    if (!edit->isValid()) bad << name;
  return bad;
}

void PolicyEditor::edited() {
  if (m_loading) return;
  m_edited = m_preset->currentIndex() > 0 || !m_measuredFrom.isEmpty();
  updateEnabled();
  emit changed();
}

void PolicyEditor::updateEnabled() {
  const bool exponential = m_backoff->currentIndex() == static_cast<int>(core::Backoff::Exponential);
  m_multiplier->setEnabled(exponential);
  const bool obeys = m_retryAfter->currentIndex() != static_cast<int>(core::RetryAfterMode::Ignore);
  m_retryAfterCap->setEnabled(obeys);
  m_overCap->setEnabled(obeys);
  const int b = m_budget->currentIndex();
  m_maxTokens->setEnabled(b == GrpcBucket || b == AwsBucket);
  m_ratio->setEnabled(b == GrpcBucket || b == RatioBudget);
  m_retryCost->setEnabled(b == AwsBucket);
  m_timeoutCost->setEnabled(b == AwsBucket);
  m_successCredit->setEnabled(b == AwsBucket);
  m_window->setEnabled(b == RatioBudget);
  m_minRetries->setEnabled(b == RatioBudget);
}

}  // namespace idem::ui::sim
