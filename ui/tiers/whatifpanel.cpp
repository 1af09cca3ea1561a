#include "ui/tiers/whatifpanel.h"

#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSlider>
#include <algorithm>

#include "core/policy/duration.h"
#include "ui/common/outcomestyle.h"
#include "ui/common/timefmt.h"
#include "ui/tiers/curvechart.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
using tiers::Millis;
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
QString bytes(double b) { return q(tiers::humanBytes(b)); }
QString percentRange(const tiers::Interval& i) { return q(tiers::humanPercentRange(i)); }
QString perMillionRange(const tiers::Interval& i) { return q(tiers::humanPerMillionRange(i)); }

QString change(double now, double then) {
  if (then <= 0) return now > 0 ? QStringLiteral("new") : QString();
  const double pct = (now - then) * 100.0 / then;
  if (std::abs(pct) < 0.5) return QStringLiteral("±0 %");
  return (pct > 0 ? u"+"_s : u"−"_s) + QString::number(std::abs(pct), 'f', 0) + u" %"_s;
}

QLabel* figure(QWidget* parent) {
  auto* l = new QLabel(parent);
  l->setTextFormat(Qt::RichText);
  l->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return l;
}

}  // namespace

WhatIfPanel::WhatIfPanel(QWidget* parent)
    : QWidget(parent), m_tierBox(new QComboBox(this)), m_slider(new QSlider(Qt::Horizontal, this)),
      m_typed(new QLineEdit(this)), m_bodyBox(new QComboBox(this)), m_context(new QLabel(this)), m_miss(figure(this)), m_perMillion(figure(this)),
      m_storage(figure(this)), m_recommendation(new QLabel(this)), m_rule(new QLabel(this)),
      m_useRecommended(new QPushButton(tr("Use recommended"), this)),
      m_useCurrent(new QPushButton(tr("Back to current"), this)),
      m_missChart(new CurveChart(tr("Retries after expiry"), tr("% of retries"),
                                 outcomeStyle(trace::Outcome::ExecutedAfterExpiry).color, this)),
      m_storageChart(new CurveChart(tr("Storage"), tr("MB"), QColor(0x1f, 0x6f, 0xd1), this)) {
  m_tierBox->setObjectName(u"whatIfTier"_s);
  m_slider->setObjectName(u"whatIfSlider"_s);
  m_typed->setObjectName(u"whatIfTtl"_s);
  m_bodyBox->setObjectName(u"whatIfBodyRetention"_s);
  m_bodyBox->setToolTip(tr("How long archived generations keep their stored response body (body_retention); "
                           "the rows stay for the audit either way"));
  m_slider->setTickPosition(QSlider::TicksBelow);
  m_slider->setPageStep(3);
  m_slider->setToolTip(tr("Candidate TTL: round durations from 1 s to 2 years, on a log scale"));
  m_typed->setPlaceholderText(tr("e.g. 36h"));
  m_typed->setToolTip(tr("Type any TTL: 250ms, 90s, 45m, 36h, 10d; Enter to apply"));
  m_typed->setMaximumWidth(90);
  m_storage->setWordWrap(true);  // the live/archive breakdown is longer than the column
  m_miss->setWordWrap(true);     // and so are a known exposure's sentence and the ranges
  m_perMillion->setWordWrap(true);
  m_recommendation->setWordWrap(true);
  m_recommendation->setTextFormat(Qt::RichText);
  m_context->setWordWrap(true);
  // The rule behind every range and recommendation below, said where the numbers are read.
  m_rule->setObjectName(u"tiersRule"_s);
  m_rule->setWordWrap(true);
  m_rule->setText(u"<small>"_s % q(tiers::confidenceRule()).toHtmlEscaped() % u"</small>"_s);
  m_recommendation->setObjectName(u"tiersRecommendation"_s);
  m_useRecommended->setObjectName(u"useRecommended"_s);

  auto* controls = m_controls = new QWidget(this);
  controls->setMinimumWidth(380);
  controls->setMaximumWidth(520);
  auto* grid = new QGridLayout(controls);
  grid->setContentsMargins(4, 4, 4, 4);
  int row = 0;
  grid->addWidget(new QLabel(tr("<b>What if</b> the tier"), controls), row, 0);
  grid->addWidget(m_tierBox, row++, 1, 1, 2);
  grid->addWidget(new QLabel(tr("kept keys for"), controls), row, 0);
  grid->addWidget(m_slider, row, 1);
  grid->addWidget(m_typed, row++, 2);
  grid->addWidget(new QLabel(tr("kept bodies for"), controls), row, 0);
  grid->addWidget(m_bodyBox, row++, 1, 1, 2);
  grid->addWidget(m_context, row++, 0, 1, 3);
  grid->addWidget(new QLabel(tr("Retries after expiry"), controls), row, 0);
  grid->addWidget(m_miss, row++, 1, 1, 2);
  grid->addWidget(new QLabel(tr("Per million operations"), controls), row, 0);
  grid->addWidget(m_perMillion, row++, 1, 1, 2);
  grid->addWidget(new QLabel(tr("Storage"), controls), row, 0);
  grid->addWidget(m_storage, row++, 1, 1, 2);
  grid->addWidget(m_recommendation, row++, 0, 1, 3);
  grid->addWidget(m_rule, row++, 0, 1, 3);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(m_useRecommended);
  buttons->addWidget(m_useCurrent);
  buttons->addStretch(1);
  grid->addLayout(buttons, row++, 0, 1, 3);
  grid->setRowStretch(row, 1);
  grid->setColumnStretch(1, 1);

  // When the splitter leaves the panel little height, the figures scroll instead of clipping.
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(controls);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(controls->minimumWidth() + 16);
  scroll->setMaximumWidth(controls->maximumWidth() + 16);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(scroll);
  layout->addWidget(m_missChart, 1);
  layout->addWidget(m_storageChart, 1);

  connect(m_tierBox, &QComboBox::currentIndexChanged, this, &WhatIfPanel::tierChosen);
  connect(m_slider, &QSlider::valueChanged, this, &WhatIfPanel::sliderMoved);
  connect(m_typed, &QLineEdit::returnPressed, this, &WhatIfPanel::typed);
  connect(m_bodyBox, &QComboBox::currentIndexChanged, this, &WhatIfPanel::bodyRetentionChosen);
  connect(m_useRecommended, &QPushButton::clicked, this, [this] {
    if (const auto* t = tier(); t && t->recommendation.made) setTtl(t->recommendation.ttl);
  });
  connect(m_useCurrent, &QPushButton::clicked, this, [this] {
    if (const auto* t = tier()) setTtl(t->tier.ttl);
  });
  setEnabled(false);
}

void WhatIfPanel::setReport(const tiers::Report& report) {
  const QString keep = currentTier();
  m_report = report;
  m_proposals.clear();
  for (const auto& t : m_report.tiers) m_proposals[t.tier.name] = t.proposed;
  const QSignalBlocker block(m_tierBox);
  m_tierBox->clear();
  for (const auto& t : m_report.tiers)
    m_tierBox->addItem(q(t.tier.name) + (t.flagged() ? u"  ⚠"_s : QString()), q(t.tier.name));
  setEnabled(!m_report.tiers.empty());
  int index = m_tierBox->findData(keep);
  if (index < 0) {  // first time: the first flagged tier is the one to look at
    auto it = std::find_if(m_report.tiers.begin(), m_report.tiers.end(), [](const auto& t) { return t.flagged(); });
    index = it == m_report.tiers.end() ? 0 : static_cast<int>(it - m_report.tiers.begin());
  }
  m_tierBox->setCurrentIndex(index);
  tierChosen(index);
}

void WhatIfPanel::setTier(const QString& name) {
  const int index = m_tierBox->findData(name);
  if (index >= 0) m_tierBox->setCurrentIndex(index);
}

QString WhatIfPanel::currentTier() const { return m_tierBox->currentData().toString(); }

const tiers::TierReport* WhatIfPanel::tier() const { return m_report.tier(currentTier().toStdString()); }

tiers::WhatIf WhatIfPanel::proposal(const std::string& name) const {
  auto it = m_proposals.find(name);
  return it == m_proposals.end() ? tiers::WhatIf{} : it->second;
}

void WhatIfPanel::tierChosen(int) {
  const auto* t = tier();
  if (!t) return;
  {
    const QSignalBlocker block(m_slider);
    m_slider->setRange(0, static_cast<int>(t->curve.size()) - 1);
  }
  {
    // "As now", then each shorter age the archive was measured for.
    const QSignalBlocker block(m_bodyBox);
    m_bodyBox->clear();
    const Millis keptNow = t->tier.bodyRetention.value_or(t->tier.archiveRetention);
    m_bodyBox->addItem(tr("as now (%1%2)")
                           .arg(formatDuration(keptNow.count()),
                                t->tier.bodyRetention ? QString() : tr(", as long as the rows")),
                       qint64(0));
    for (Millis keep : tiers::bodyRetentionLadder())
      if (tiers::archiveBytesKeepingBodies(*t, keep)) m_bodyBox->addItem(formatDuration(keep.count()), qint64(keep.count()));
    const auto chosen = proposal(t->tier.name).bodyRetention;
    const int index = chosen ? m_bodyBox->findData(qint64(chosen->count())) : 0;
    m_bodyBox->setCurrentIndex(std::max(index, 0));
    m_bodyBox->setEnabled(m_bodyBox->count() > 1);
  }
  show(proposal(t->tier.name));
}

void WhatIfPanel::bodyRetentionChosen(int) {
  const auto* t = tier();
  if (!t) return;
  auto& p = m_proposals[t->tier.name];
  p = withBodies(p);
  show(p);
  emit proposalChanged();
}

double WhatIfPanel::bodyDelta() const {
  const auto* t = tier();
  const qint64 keep = m_bodyBox->currentData().toLongLong();
  if (!t || keep <= 0) return 0;
  const auto archive = tiers::archiveBytesKeepingBodies(*t, Millis(keep));
  return archive ? *archive - t->storage.archiveBytes : 0;
}

tiers::WhatIf WhatIfPanel::withBodies(tiers::WhatIf w) const {
  const auto* t = tier();
  if (!t) return w;
  const qint64 keep = m_bodyBox->currentData().toLongLong();
  w.bodyRetention = keep > 0 ? std::optional<Millis>(Millis(keep)) : std::nullopt;
  w.storageBytes = w.liveBytes + t->storage.archiveBytes + bodyDelta();
  return w;
}

void WhatIfPanel::fillCurves(Millis candidate) {
  const auto* t = tier();
  if (!t) return;
  // The curves show the durations that matter to this tier (a decade either side of its TTL,
  // its recommendation, its retries and windows, and the candidate), not 1 s to 2 years.
  double lo = static_cast<double>(std::min({t->tier.ttl, t->recommendation.ttl, candidate}).count());
  double hi = static_cast<double>(std::max({t->tier.ttl, t->recommendation.ttl, candidate}).count());
  if (const auto& o = t->retries.offsets) {
    lo = std::min(lo, std::max(o->p50, 1.0));
    hi = std::max(hi, o->max);
  }
  for (const auto& [name, w] : t->tier.referenceWindows) hi = std::max(hi, static_cast<double>(w.count()));
  lo /= 10;
  hi *= 10;
  QList<QPointF> miss, storage;
  double maxBytes = 0;
  const double delta = bodyDelta();  // the curve's points are the report's, bodies as now
  for (const auto& w : t->curve) {
    const double x = static_cast<double>(w.ttl.count());
    miss << QPointF(x, w.missRate * 100.0);
    storage << QPointF(x, w.storageBytes + delta);
    if (x >= lo && x <= hi) maxBytes = std::max(maxBytes, w.storageBytes + delta);
  }
  m_missChart->setCurve(miss, 1, tr("% of retries"), lo, hi, 100);
  const bool mega = maxBytes >= 1024.0 * 1024.0;
  m_storageChart->setCurve(storage, mega ? 1024.0 * 1024.0 : 1024.0, mega ? tr("MB") : tr("kB"), lo, hi);
}

void WhatIfPanel::setTtl(Millis ttl) {
  const auto* t = tier();
  if (!t || ttl <= Millis(0)) return;
  if (const auto* point = t->pointAt(ttl)) {
    m_proposals[t->tier.name] = withBodies(*point);
    show(m_proposals[t->tier.name]);
    emit proposalChanged();
    return;
  }
  m_typed->setText(q(policy::formatDuration(ttl)));
  m_miss->setText(tr("<i>computing…</i>"));
  emit whatIfRequested(currentTier(), ttl.count());
}

void WhatIfPanel::setWhatIf(const QString& name, const tiers::WhatIf& w) {
  auto& p = m_proposals[name.toStdString()];
  p = name == currentTier() ? withBodies(w) : w;
  if (name == currentTier()) show(p);
  emit proposalChanged();
}

void WhatIfPanel::sliderMoved(int position) {
  const auto* t = tier();
  if (!t || position < 0 || position >= static_cast<int>(t->curve.size())) return;
  setTtl(t->curve[static_cast<std::size_t>(position)].ttl);
}

void WhatIfPanel::typed() {
  const auto ttl = policy::parseDuration(m_typed->text().trimmed().toStdString());
  if (!ttl || ttl->count() <= 0) {
    m_typed->setStyleSheet(u"QLineEdit { border: 1px solid #d0312d; }"_s);
    m_typed->setToolTip(tr("“%1” is not a duration. Write a whole number and a unit: 250ms, 90s, 45m, 36h, 10d.")
                            .arg(m_typed->text()));
    return;
  }
  m_typed->setStyleSheet({});
  m_typed->setToolTip(tr("Type any TTL: 250ms, 90s, 45m, 36h, 10d; Enter to apply"));
  setTtl(*ttl);
}

void WhatIfPanel::show(const tiers::WhatIf& w) {
  const auto* t = tier();
  if (!t) return;
  // The slider sits on the curve's point at or below the candidate.
  int position = 0;
  for (std::size_t i = 0; i < t->curve.size(); ++i)
    if (t->curve[i].ttl <= w.ttl) position = static_cast<int>(i);
  {
    const QSignalBlocker block(m_slider);
    m_slider->setValue(position);
  }
  if (!m_typed->hasFocus()) m_typed->setText(q(policy::formatDuration(w.ttl)));

  const auto& now = t->current;
  const bool execute = t->tier.onExpired == policy::OnExpired::Execute;
  m_context->setText(tr("%1 · TTL in force %2 · recommended %3 · %4 retries after %5 operations")
                         .arg(q(t->tier.name), formatDuration(t->tier.ttl.count()),
                              t->recommendation.made ? formatDuration(t->recommendation.ttl.count()) : tr("none yet"))
                         .arg(t->retries.retries)
                         .arg(t->retries.operations));
  const QString lateColour = outcomeStyle(execute ? trace::Outcome::ExecutedAfterExpiry : trace::Outcome::RejectedExpired).color.name();
  auto strong = [&](const QString& text, bool bad) {
    return bad ? u"<b style='color:%1'>%2</b>"_s.arg(lateColour, text) : u"<b>%1</b>"_s.arg(text);
  };
  // The 95 % range leads: one late retry in 66 operations is not "15,152 per million".
  QString miss = tr("%1 <small>(%2 of %3 observed) · now %4</small>")
                     .arg(strong(percentRange(w.missRateRange), w.afterExpiry > 0))
                     .arg(w.afterExpiry)
                     .arg(w.retries)
                     .arg(percentRange(now.missRateRange));
  // A window the TTL does not cover is a known exposure even when the trace caught nothing.
  if (w.exposed()) miss += u"<br>"_s % strong(tr("Known exposure:"), true) % u" "_s % q(tiers::exposureText(w)).toHtmlEscaped();
  m_miss->setText(miss);
  m_perMillion->setText(tr("%1 %2 <small>· now %3</small>")
                            .arg(strong(perMillionRange(w.perMillionRange), w.afterExpiry > 0),
                                 execute ? tr("duplicate executions") : tr("rejections (422)"),
                                 perMillionRange(now.perMillionRange)));
  if (w.bodyRetention) {
    const double archive = t->storage.archiveBytes + bodyDelta();
    m_storage->setText(tr("%1 <small>· now %2 (%3) · live %4 + archive %5 with bodies kept %6 (now %7, %8 of it "
                          "stored bodies)</small>")
                           .arg(strong(bytes(w.storageBytes), false), bytes(now.storageBytes),
                                change(w.storageBytes, now.storageBytes), bytes(w.liveBytes), bytes(archive),
                                formatDuration(w.bodyRetention->count()), bytes(t->storage.archiveBytes),
                                bytes(t->storage.archiveBodyBytes)));
  } else {
    m_storage->setText(tr("%1 <small>· now %2 (%3) · live %4 + archive %5 (%6 of it stored bodies%7)</small>")
                           .arg(strong(bytes(w.storageBytes), false), bytes(now.storageBytes),
                                change(w.storageBytes, now.storageBytes), bytes(w.liveBytes),
                                bytes(t->storage.archiveBytes), bytes(t->storage.archiveBodyBytes),
                                t->tier.bodyRetention
                                    ? tr(", dropped after %1").arg(formatDuration(t->tier.bodyRetention->count()))
                                    : tr(", kept as long as the rows")));
  }
  const auto& rec = t->recommendation;
  if (rec.made)
    m_recommendation->setText(tr("<b>Recommended: %1</b> — %2. It would cost %3 of storage (%4 against now), "
                                 "with %5 of retries after expiry.")
                                  .arg(formatDuration(rec.ttl.count()), q(rec.because).toHtmlEscaped(),
                                       bytes(rec.cost.storageBytes), change(rec.cost.storageBytes, now.storageBytes),
                                       percentRange(rec.cost.missRateRange)));
  else
    m_recommendation->setText(tr("<b>No recommendation</b> — %1.").arg(q(rec.because).toHtmlEscaped()));
  m_useRecommended->setEnabled(rec.made && w.ttl != rec.ttl);
  m_useRecommended->setToolTip(rec.made ? QString() : tr("Not enough retries observed to recommend a TTL"));
  m_useCurrent->setEnabled(w.ttl != t->tier.ttl);
  fitControls();
  fillCurves(w.ttl);
  const double ttlMs = static_cast<double>(w.ttl.count());
  const double recommendedMs = rec.made ? static_cast<double>(rec.ttl.count()) : 0;
  m_missChart->setMarkers(static_cast<double>(t->tier.ttl.count()), recommendedMs, ttlMs,
                          w.missRate * 100.0);
  m_storageChart->setMarkers(static_cast<double>(t->tier.ttl.count()), recommendedMs, ttlMs,
                             w.storageBytes);
}

void WhatIfPanel::fitControls() {
  // Wrapped figures need the height their text takes at the column's width; without this the
  // grid squeezes them into one line each and a known exposure's sentence is cut off. The
  // scroll area then scrolls instead of clipping.
  const int width = std::max(m_controls->width(), m_controls->minimumWidth());
  const int height = m_controls->layout()->heightForWidth(width);
  if (height > 0) m_controls->setMinimumHeight(height);
}

void WhatIfPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitControls();
}

QString WhatIfPanel::summary() const {
  auto plain = [](const QLabel* l) {
    QString s = l->text();
    s.remove(QRegularExpression(u"<[^>]*>"_s));
    return s;
  };
  return plain(m_miss) % u"\n"_s % plain(m_perMillion) % u"\n"_s % plain(m_storage);
}

}  // namespace idem::ui
