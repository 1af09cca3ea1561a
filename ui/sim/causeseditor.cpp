#include "ui/sim/causeseditor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

#include "core/sim/config_parse.h"
#include "ui/sim/durationedit.h"
#include "ui/sim/numberbox.h"

using namespace Qt::StringLiterals;
namespace core = idem::sim;

namespace idem::ui::sim {
namespace {

/// An intermediary preset as the config parser resolves it: one definition of each preset.
core::Intermediary meshPreset(const char* name) {
  return core::parseConfig(nlohmann::json{{"intermediary", {{"preset", name}}}}).intermediary;
}

}  // namespace

CausesEditor::CausesEditor(QWidget* parent)
    : QWidget(parent),
      m_newKey(numberBox(0, 100, 1, tr(" %"), this)),
      m_sameBody(numberBox(0, 100, 3, tr(" %"), this)),
      m_mode(new QComboBox(this)),
      m_window(new DurationEdit(false, this)),
      m_mesh(new QComboBox(this)),
      m_meshRetries(new QSpinBox(this)),
      m_hedge(new QCheckBox(tr("Send hedged copies"), this)),
      m_hedgeDelay(new DurationEdit(false, this)),
      m_hedgeCopies(new QSpinBox(this)),
      m_hedge409(new QCheckBox(tr("409 is non-fatal (wait for the other copies)"), this)) {
  m_newKey->setObjectName(u"newKeyOnRetry"_s);
  m_newKey->setToolTip(tr("Chance that a retry carries a key of its own: an agent told ids must be unique, a "
                          "browser that keys every click. The store cannot know it is the same operation."));
  m_sameBody->setToolTip(tr("Operations that are the same request as the one before on purpose (the same charge "
                            "twice): what detection holds wrongly."));
  m_mode->addItems({tr("off"), tr("observe (run it, record the match)"), tr("hold (409 naming the earlier run)"),
                    tr("reject (refuse it)")});
  m_mode->setObjectName(u"crossKeyMode"_s);
  m_mesh->addItems({tr("none"), tr("Istio default (2 retries: connect failure, 503)"),
                    tr("Envoy retriable-4xx (1 retry: 5xx, 409, connect failure)"), tr("custom (from the scenario)")});
  m_mesh->setObjectName(u"intermediary"_s);
  m_meshRetries->setRange(0, 10);
  m_meshRetries->setMaximumWidth(130);
  m_hedgeCopies->setMaximumWidth(130);
  m_hedgeCopies->setRange(2, 5);  // gRPC caps hedged attempts at 5
  for (QComboBox* c : {m_mode, m_mesh}) {
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(14);
  }

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* clients = new QGroupBox(tr("Clients"), this);
  auto* cf = new QFormLayout(clients);
  cf->addRow(tr("New key on a retry"), m_newKey);
  cf->addRow(tr("Meant repeats"), m_sameBody);
  layout->addWidget(clients);

  auto* mesh = new QGroupBox(tr("Intermediary (mesh, gateway)"), this);
  auto* mf = new QFormLayout(mesh);
  mf->addRow(tr("Retries on its own"), m_mesh);
  mf->addRow(tr("Retries per attempt"), m_meshRetries);
  layout->addWidget(mesh);

  auto* hedging = new QGroupBox(tr("Hedged requests (same key)"), this);
  auto* hf = new QFormLayout(hedging);
  hf->addRow(m_hedge);
  hf->addRow(tr("After"), m_hedgeDelay);
  hf->addRow(tr("Copies at most"), m_hedgeCopies);
  hf->addRow(m_hedge409);
  layout->addWidget(hedging);

  auto* detection = new QGroupBox(tr("Cross-key detection in the store"), this);
  auto* df = new QFormLayout(detection);
  df->addRow(tr("Same request, other key"), m_mode);
  df->addRow(tr("Window"), m_window);
  auto* note = new QLabel(tr("The report runs the scenario once more with detection the other way, so both "
                             "counts show side by side."),
                          detection);
  note->setWordWrap(true);
  df->addRow(note);
  layout->addWidget(detection);
  layout->addStretch(1);

  for (auto* d : {m_window, m_hedgeDelay}) connect(d, &DurationEdit::durationChanged, this, &CausesEditor::changed);
  for (auto* s : {m_newKey, m_sameBody}) connect(s, &QDoubleSpinBox::valueChanged, this, &CausesEditor::changed);
  for (auto* s : {m_meshRetries, m_hedgeCopies}) connect(s, &QSpinBox::valueChanged, this, &CausesEditor::changed);
  for (auto* c : {m_hedge, m_hedge409}) connect(c, &QCheckBox::toggled, this, &CausesEditor::changed);
  for (auto* c : {m_mode, m_mesh}) connect(c, &QComboBox::currentIndexChanged, this, &CausesEditor::changed);
  connect(m_mesh, &QComboBox::currentIndexChanged, this, [this](int index) {
    // A preset shows its own retry count; custom keeps what the scenario said.
    const QSignalBlocker block(m_meshRetries);
    if (index == Istio) m_meshRetries->setValue(meshPreset("istio").retry.maxAttempts - 1);
    if (index == EnvoyRetriable4xx) m_meshRetries->setValue(meshPreset("envoy-retriable-4xx").retry.maxAttempts - 1);
    if (index == CustomMesh) m_meshRetries->setValue(m_loadedMesh.retry.maxAttempts - 1);
  });
  connect(this, &CausesEditor::changed, this, &CausesEditor::updateEnabled);
  setConfig(core::SimConfig{});
}

void CausesEditor::setConfig(const core::SimConfig& c) {
  const QSignalBlocker block(this);
  m_newKey->setValue(100 * c.clients.newKeyOnRetry);
  m_sameBody->setValue(100 * c.clients.sameBodyShare);
  m_mode->setCurrentIndex(static_cast<int>(c.store.crossKey.mode));
  m_window->setDuration(c.store.crossKey.window);
  m_loadedMesh = c.intermediary;
  const int mesh = !c.intermediary.enabled                          ? NoMesh
                   : c.intermediary.preset == "istio"               ? Istio
                   : c.intermediary.preset == "envoy-retriable-4xx" ? EnvoyRetriable4xx
                                                                    : CustomMesh;
  m_mesh->setCurrentIndex(mesh);
  m_meshRetries->setValue(c.intermediary.enabled ? c.intermediary.retry.maxAttempts - 1 : 1);
  m_hedge->setChecked(c.hedging.enabled);
  m_hedgeDelay->setDuration(c.hedging.delay);
  m_hedgeCopies->setValue(c.hedging.maxCopies);
  m_hedge409->setChecked((c.hedging.nonFatal & core::kConflict409) != 0);
  updateEnabled();
}

void CausesEditor::apply(core::SimConfig& c) const {
  c.clients.newKeyOnRetry = m_newKey->value() / 100;
  c.clients.sameBodyShare = m_sameBody->value() / 100;
  c.store.crossKey.mode = static_cast<core::CrossKey::Mode>(m_mode->currentIndex());
  c.store.crossKey.window = m_window->durationOr(c.store.crossKey.window);
  switch (m_mesh->currentIndex()) {
    case Istio:
      c.intermediary = meshPreset("istio");
      break;
    case EnvoyRetriable4xx:
      c.intermediary = meshPreset("envoy-retriable-4xx");
      break;
    case CustomMesh:
      c.intermediary = m_loadedMesh;
      c.intermediary.enabled = true;
      break;
    default:
      c.intermediary = core::Intermediary{};
  }
  if (c.intermediary.enabled) c.intermediary.retry.maxAttempts = 1 + m_meshRetries->value();
  c.hedging.enabled = m_hedge->isChecked();
  c.hedging.delay = m_hedgeDelay->durationOr(c.hedging.delay);
  c.hedging.maxCopies = m_hedgeCopies->value();
  c.hedging.nonFatal = m_hedge409->isChecked() ? core::kConflict409 : 0U;
}

QStringList CausesEditor::invalidFields() const {
  QStringList bad;
  if (!m_window->isValid() || m_window->durationOr(0) <= 0) bad << tr("detection window");
  if (m_hedge->isChecked() && (!m_hedgeDelay->isValid() || m_hedgeDelay->durationOr(0) <= 0)) bad << tr("hedging delay");
  return bad;
}

void CausesEditor::updateEnabled() {
  m_window->setEnabled(m_mode->currentIndex() != static_cast<int>(core::CrossKey::Mode::Off));
  m_meshRetries->setEnabled(m_mesh->currentIndex() != NoMesh);
  for (QWidget* w : std::initializer_list<QWidget*>{m_hedgeDelay, m_hedgeCopies, m_hedge409})
    w->setEnabled(m_hedge->isChecked());
  m_mesh->setItemData(CustomMesh, m_loadedMesh.enabled && m_loadedMesh.preset.empty() ? QVariant() : QVariant(0),
                      Qt::UserRole - 1);  // "custom" only when a scenario brought one
}

}  // namespace idem::ui::sim
