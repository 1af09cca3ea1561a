#include "ui/trace/timelinewidget.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "ui/common/outcomestyle.h"
#include "ui/common/timefmt.h"
#include "ui/common/timezonesetting.h"
#include "ui/trace/eventmodel.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

constexpr int kLanes = 5;
constexpr double kLeft = 96;     // lane labels
constexpr double kTop = 28;      // axis labels
constexpr double kLaneH = 30;
constexpr double kGenBandH = 34; // generation windows band under the axis
constexpr double kLegendH = 26;
constexpr double kHitRadius = 7;
constexpr double kMinSpanMs = 200;

double msOf(explain::Instant t) { return static_cast<double>(t.micros) / 1000.0; }

const char* laneName(int lane) {
  switch (lane) {
    case 0: return QT_TRANSLATE_NOOP("TimelineWidget", "executions");
    case 1: return QT_TRANSLATE_NOOP("TimelineWidget", "replays");
    case 2: return QT_TRANSLATE_NOOP("TimelineWidget", "409 conflicts");
    case 3: return QT_TRANSLATE_NOOP("TimelineWidget", "422 rejected");
    default: return QT_TRANSLATE_NOOP("TimelineWidget", "other");
  }
}

void drawMarker(QPainter& p, const QPointF& c, const OutcomeStyle& s, double r) {
  p.setPen(QPen(s.color.darker(130), 1.2));
  p.setBrush(s.color);
  switch (s.shape) {
    case MarkerShape::Circle: p.drawEllipse(c, r, r); break;
    case MarkerShape::Ring:
      p.setBrush(Qt::white);
      p.setPen(QPen(s.color, 2.2));
      p.drawEllipse(c, r - 1, r - 1);
      break;
    case MarkerShape::Triangle: {
      const QPointF pts[] = {{c.x(), c.y() - r}, {c.x() + r, c.y() + r * 0.8}, {c.x() - r, c.y() + r * 0.8}};
      p.drawPolygon(pts, 3);
      break;
    }
    case MarkerShape::Square: p.drawRect(QRectF(c.x() - r * 0.85, c.y() - r * 0.85, r * 1.7, r * 1.7)); break;
    case MarkerShape::Diamond: {
      const QPointF pts[] = {{c.x(), c.y() - r * 1.2}, {c.x() + r, c.y()}, {c.x(), c.y() + r * 1.2}, {c.x() - r, c.y()}};
      p.drawPolygon(pts, 4);
      break;
    }
    case MarkerShape::Cross:
      p.setPen(QPen(s.color, 2));
      p.drawLine(c + QPointF(-r, -r), c + QPointF(r, r));
      p.drawLine(c + QPointF(-r, r), c + QPointF(r, -r));
      break;
  }
}

// The smallest human step that leaves each tick label room (its width and a gap) within
// plotWidth, and at most 8 ticks: labels never print over each other, a narrow timeline gets
// fewer ticks.
std::pair<double, QString> tickStep(double spanMs, double plotWidth, const QFontMetricsF& fm) {
  struct Step {
    double ms;
    const char16_t* format;
  };
  static constexpr Step steps[] = {
      {100, u"HH:mm:ss.zzz"}, {500, u"HH:mm:ss.zzz"}, {1e3, u"HH:mm:ss"}, {5e3, u"HH:mm:ss"},
      {15e3, u"HH:mm:ss"},    {60e3, u"HH:mm"},       {300e3, u"HH:mm"}, {900e3, u"HH:mm"},
      {1800e3, u"HH:mm"},     {3600e3, u"HH:mm"},     {3 * 3600e3, u"MM-dd HH:mm"},
      {6 * 3600e3, u"MM-dd HH:mm"}, {12 * 3600e3, u"MM-dd HH:mm"}, {86400e3, u"yyyy-MM-dd"},
      {7 * 86400e3, u"yyyy-MM-dd"}, {30 * 86400e3, u"yyyy-MM-dd"}};
  for (const auto& s : steps) {
    const QString format = QString::fromUtf16(s.format);
    const double labelWidth = fm.horizontalAdvance(QDateTime(QDate(2026, 12, 28), QTime(23, 58, 58)).toString(format)) + 16;
    if (spanMs / s.ms <= 8 && plotWidth / (spanMs / s.ms) >= labelWidth) return {s.ms, format};
  }
  return {365 * 86400e3, u"yyyy-MM-dd"_s};
}

}  // namespace

TimelineWidget::TimelineWidget(EventModel* model, QWidget* parent) : QWidget(parent), m_model(model) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setToolTip({});  // tooltips are per event: see event()
  connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
    m_selected = -1;
    fitAll();
  });
}

QSize TimelineWidget::sizeHint() const { return {800, static_cast<int>(kTop + kGenBandH + kLanes * kLaneH + kLegendH + 16)}; }
QSize TimelineWidget::minimumSizeHint() const { return {300, static_cast<int>(kTop + kGenBandH + kLanes * kLaneH + kLegendH)}; }

QRectF TimelineWidget::plotRect() const {
  return QRectF(kLeft, kTop, std::max(10.0, width() - kLeft - 12), kGenBandH + kLanes * kLaneH);
}

double TimelineWidget::xOf(double ms) const {
  const QRectF r = plotRect();
  return r.left() + (ms - m_startMs) / (m_endMs - m_startMs) * r.width();
}

double TimelineWidget::msAt(double x) const {
  const QRectF r = plotRect();
  return m_startMs + (x - r.left()) / r.width() * (m_endMs - m_startMs);
}

int TimelineWidget::laneOf(const std::string& outcome) {
  const auto o = trace::parseOutcome(outcome);
  if (!o) return 4;
  switch (trace::kind(*o)) {
    case trace::OutcomeKind::Execution: return 0;
    case trace::OutcomeKind::Replay: return 1;
    case trace::OutcomeKind::InProgress: return 2;
    case trace::OutcomeKind::Refused: return 3;
    case trace::OutcomeKind::CrossKey:  // a 409 for another key's duplicate; a flag beside the execution that ran
      return *o == trace::Outcome::DuplicateHeld || *o == trace::Outcome::DuplicateRejected ? 2 : 4;
    case trace::OutcomeKind::NotStored:
    case trace::OutcomeKind::Observed:  // ran although not the key's: beside the released ones
      return 4;
  }
  return 4;
}

double TimelineWidget::laneY(int lane) const { return plotRect().top() + kGenBandH + (lane + 0.5) * kLaneH; }

void TimelineWidget::fitAll() {
  const KeyDetail& d = m_model->detail();
  double lo = std::numeric_limits<double>::max();
  double hi = std::numeric_limits<double>::lowest();
  auto take = [&](explain::Instant t) {
    const double ms = msOf(t);
    lo = std::min(lo, ms);
    hi = std::max(hi, ms);
  };
  for (const auto& e : d.events()) take(e.at);
  for (const auto& g : d.generations()) {
    take(g.createdAt);
    if (!g.live) take(g.expiresAt);  // an earlier window's end explains what came after it
    if (g.leaseUntil) take(*g.leaseUntil);
  }
  if (lo > hi) {
    const double now = static_cast<double>(QDateTime::currentMSecsSinceEpoch());
    lo = now - 3600e3;
    hi = now;
  }
  const double span = std::max(hi - lo, kMinSpanMs * 10);
  m_startMs = lo - span * 0.06;
  m_endMs = hi + span * 0.06;
  layoutMarkers();
  update();
}

void TimelineWidget::zoom(double factor, double x) {
  const double anchor = msAt(x);
  double span = (m_endMs - m_startMs) / factor;
  span = std::clamp(span, kMinSpanMs, 3650 * 86400e3);
  const double frac = (anchor - m_startMs) / (m_endMs - m_startMs);
  m_startMs = anchor - frac * span;
  m_endMs = m_startMs + span;
  layoutMarkers();
  update();
}

void TimelineWidget::setSelectedRow(int row) {
  m_selected = row;
  update();
}

QPointF TimelineWidget::markerPosition(int row) const {
  return (row >= 0 && row < markerCount()) ? m_markers[static_cast<std::size_t>(row)] : QPointF();
}

void TimelineWidget::layoutMarkers() {
  const auto& events = m_model->detail().events();
  m_markers.clear();
  m_markers.reserve(events.size());
  // Markers closer than a few pixels in one lane are nudged up and down in turn, so a
  // burst of replays shows as a cluster rather than one dot.
  std::vector<double> lastX(kLanes, -1e9);
  std::vector<int> stack(kLanes, 0);
  for (const auto& e : events) {
    const int lane = laneOf(e.outcome);
    const double x = xOf(msOf(e.at));
    const auto l = static_cast<std::size_t>(lane);
    stack[l] = (x - lastX[l] < 3) ? (stack[l] + 1) % 5 : 0;
    lastX[l] = x;
    const double dy = (stack[l] % 2 ? -1 : 1) * ((stack[l] + 1) / 2) * 4.0;
    m_markers.emplace_back(x, laneY(lane) + dy);
  }
}

int TimelineWidget::eventAt(const QPointF& pos) const {
  int best = -1;
  double bestD = kHitRadius * kHitRadius;
  for (std::size_t i = 0; i < m_markers.size(); ++i) {
    const QPointF d = m_markers[i] - pos;
    const double dd = d.x() * d.x() + d.y() * d.y();
    if (dd <= bestD) {
      bestD = dd;
      best = static_cast<int>(i);
    }
  }
  return best;
}

void TimelineWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), palette().base());
  const QRectF plot = plotRect();
  paintGenerations(p, plot);
  paintAxis(p, plot);
  paintMarkers(p);
  paintLegend(p);
  if (m_model->rowCount() == 0) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(plot, Qt::AlignCenter, tr("No events recorded for this key."));
  }
}

void TimelineWidget::paintAxis(QPainter& p, const QRectF& plot) {
  const QColor grid = palette().color(QPalette::Mid);
  p.setPen(palette().color(QPalette::Text));
  for (int lane = 0; lane < kLanes; ++lane)
    p.drawText(QRectF(4, laneY(lane) - kLaneH / 2, kLeft - 10, kLaneH), Qt::AlignRight | Qt::AlignVCenter,
               tr(laneName(lane)));
  p.drawText(QRectF(4, plot.top(), kLeft - 10, kGenBandH), Qt::AlignRight | Qt::AlignVCenter, tr("generations"));
  QFontMetricsF fm(font());
  const auto [step, format] = tickStep(m_endMs - m_startMs, plot.width(), fm);
  // Ticks fall on multiples of the step in the zone shown (days start at its midnight).
  const TimeZoneSetting& zone = TimeZoneSetting::instance();
  const qint64 offsetMs =
      static_cast<qint64>(zone.inZone(QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(m_startMs), Qt::UTC)).offsetFromUtc()) *
      1000;
  double t = std::ceil((m_startMs + static_cast<double>(offsetMs)) / step) * step - static_cast<double>(offsetMs);
  m_tickLabels.clear();
  for (; t <= m_endMs; t += step) {
    const double x = xOf(t);
    p.setPen(QPen(grid, 1, Qt::DotLine));
    p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
    const QString label = zone.inZone(QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(t), Qt::UTC)).toString(format);
    p.setPen(palette().color(QPalette::Text));
    const QPointF at(x - fm.horizontalAdvance(label) / 2, kTop - 8);
    m_tickLabels.push_back(QRectF(at.x(), at.y() - fm.ascent(), fm.horizontalAdvance(label), fm.height()));
    p.drawText(at, label);
  }
  p.setPen(QPen(grid, 1));
  p.drawRect(plot);
  // The database's "now", when in view.
  const KeyDetail& d = m_model->detail();
  if (d.ref.isValid()) {
    const double x = xOf(msOf(d.history().observedAt));
    if (x >= plot.left() && x <= plot.right()) {
      p.setPen(QPen(QColor(0x44, 0x44, 0x44), 1, Qt::DashDotLine));
      p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
      p.drawText(QPointF(x + 3, plot.bottom() - 4), tr("now"));
    }
  }
}

void TimelineWidget::paintGenerations(QPainter& p, const QRectF& plot) {
  static const QColor shades[] = {QColor(0x1f, 0x6f, 0xd1, 28), QColor(0xc0, 0x1c, 0xb0, 28)};
  const KeyDetail& d = m_model->detail();
  p.save();
  p.setClipRect(plot);
  const auto& generations = d.generations();
  for (std::size_t i = 0; i < generations.size(); ++i) {
    const explain::Generation& g = generations[i];
    const double x0 = xOf(msOf(g.createdAt));
    const double x1 = xOf(msOf(g.expiresAt));
    const QColor shade = shades[i % 2];
    p.fillRect(QRectF(QPointF(x0, plot.top()), QPointF(x1, plot.bottom())), shade);
    QColor edge = shade;
    edge.setAlpha(200);
    p.setPen(QPen(edge, 1.5));
    p.drawLine(QPointF(x0, plot.top()), QPointF(x0, plot.bottom()));
    p.setPen(QPen(edge, 1.5, Qt::DashLine));
    p.drawLine(QPointF(x1, plot.top()), QPointF(x1, plot.bottom()));
    // The longest label that fits the band whole: a narrow band gets "gen 2", never "ger".
    const QString shortLabel = tr("gen %1").arg(g.number);
    const QString mediumLabel = shortLabel % u" · "_s % (g.live ? tr("live") : tr("archived"));
    const QString longLabel = tr("%1 · valid until %2").arg(mediumLabel, formatAbsolute(toDateTime(g.expiresAt)));
    const double left = std::max(x0, plot.left());
    const QRectF labelRect(left + 4, plot.top() + 2, std::max(0.0, std::min(x1, plot.right()) - left - 6), kGenBandH / 2);
    const QFontMetricsF metrics(font());
    p.setPen(palette().color(QPalette::Text));
    for (const QString& label : {longLabel, mediumLabel, shortLabel}) {
      if (metrics.horizontalAdvance(label) > labelRect.width()) continue;
      p.drawText(labelRect, Qt::AlignLeft | Qt::AlignVCenter, label);
      break;
    }
    // The lease of a processing generation: who holds the key, until when.
    if (g.leaseUntil) {
      const double l1 = xOf(msOf(*g.leaseUntil));
      const QRectF bar(QPointF(x0, plot.top() + kGenBandH / 2 + 2), QPointF(l1, plot.top() + kGenBandH - 4));
      p.fillRect(bar, QBrush(QColor(0xe0, 0x9b, 0x00, 150), Qt::BDiagPattern));
      p.setPen(QColor(0xe0, 0x9b, 0x00));
      p.drawRect(bar);
      p.drawText(bar.adjusted(4, 0, 200, 0), Qt::AlignLeft | Qt::AlignVCenter,
                 tr("lease until %1").arg(formatAbsolute(toDateTime(g.leaseUntil))));
    }
  }
  // Between one generation's expiry and the next one's start: the gap that explains a
  // second execution ("the retry came 32 minutes after expiry").
  for (std::size_t i = 1; i < generations.size(); ++i) {
    const explain::Generation& prev = generations[i - 1];
    const explain::Generation& next = generations[i];
    const auto gapMs = static_cast<qint64>(msOf(next.createdAt) - msOf(prev.expiresAt));
    if (gapMs <= 0) continue;
    const double x0 = xOf(msOf(prev.expiresAt));
    const double x1 = xOf(msOf(next.createdAt));
    const double y = plot.top() + kGenBandH * 0.75;
    const QColor magenta = outcomeStyle(trace::Outcome::ExecutedAfterExpiry).color;
    p.setPen(QPen(magenta, 1.5));
    p.drawLine(QPointF(x0, y), QPointF(x1, y));
    p.drawLine(QPointF(x0, y - 4), QPointF(x0, y + 4));
    p.drawLine(QPointF(x1, y - 4), QPointF(x1, y + 4));
    const QString label = tr("retry %1 after expiry").arg(formatDuration(gapMs));
    const double w = QFontMetricsF(font()).horizontalAdvance(label);
    // Inside the gap when it is wide enough, else just before the expiry line.
    const double lx = std::max(plot.left() + 2, (x1 - x0) > w + 8 ? (x0 + x1) / 2 - w / 2 : x0 - w - 6);
    p.drawText(QPointF(lx, y + 4), label);
  }
  p.restore();
}

void TimelineWidget::paintMarkers(QPainter& p) {
  const auto& events = m_model->detail().events();
  p.save();
  p.setClipRect(plotRect().adjusted(-8, 0, 8, 0));
  const QFontMetricsF fm(font());
  double labelsEndX = -std::numeric_limits<double>::max();  // labels never overprint each other
  for (std::size_t i = 0; i < events.size() && i < m_markers.size(); ++i)
    drawMarker(p, m_markers[i], outcomeStyle(events[i].outcome), 5.5);
  for (std::size_t i = 0; i < events.size() && i < m_markers.size(); ++i) {
    // One marker stands for a whole folded storm: say how many decisions it holds, over the
    // markers and where there is room (the table and the tooltip always say it).
    if (events[i].repeats > 1 && m_markers[i].x() + 8 > labelsEndX) {
      const QString label = u"×"_s + QString::number(events[i].repeats);
      p.setPen(palette().color(QPalette::Text));
      p.drawText(m_markers[i] + QPointF(8, -6), label);
      labelsEndX = m_markers[i].x() + 8 + fm.horizontalAdvance(label) + 6;
    }
  }
  if (m_selected >= 0 && m_selected < markerCount()) {
    p.setPen(QPen(palette().color(QPalette::Highlight), 2));
    p.setBrush(Qt::NoBrush);
    p.drawEllipse(m_markers[static_cast<std::size_t>(m_selected)], 10, 10);
  }
  p.restore();
}

void TimelineWidget::paintLegend(QPainter& p) {
  using trace::Outcome;
  // The usual five always, so the legend does not jump from key to key; any other outcome only
  // when one of this key's markers shows it (a lease takeover, an outcome unknown, …).
  std::vector<Outcome> outcomes{Outcome::Executed, Outcome::Replayed, Outcome::Conflict, Outcome::Mismatch,
                                Outcome::ExecutedAfterExpiry};
  for (const auto& e : m_model->detail().events())
    if (const auto o = trace::parseOutcome(e.outcome); o && std::find(outcomes.begin(), outcomes.end(), *o) == outcomes.end())
      outcomes.push_back(*o);
  double x = kLeft;
  double y = plotRect().bottom() + kLegendH / 2 + 4;
  QFontMetricsF fm(font());
  for (const Outcome o : outcomes) {
    const OutcomeStyle s = outcomeStyle(o);
    if (x + 30 + fm.horizontalAdvance(s.label) > width()) {  // wrap on narrow widgets
      x = kLeft;
      y += fm.height() + 4;
    }
    drawMarker(p, QPointF(x + 6, y), s, 5);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QPointF(x + 16, y + fm.ascent() / 2 - 1), s.label);
    x += 30 + fm.horizontalAdvance(s.label);
  }
  if (x + 30 + fm.horizontalAdvance(tr("validity window")) > width()) {  // the last item wraps too
    x = kLeft;
    y += fm.height() + 4;
  }
  p.fillRect(QRectF(x, y - 6, 18, 12), QColor(0x1f, 0x6f, 0xd1, 40));
  p.setPen(palette().color(QPalette::Text));
  p.drawText(QPointF(x + 24, y + fm.ascent() / 2 - 1), tr("validity window"));
}

void TimelineWidget::resizeEvent(QResizeEvent*) { layoutMarkers(); }

void TimelineWidget::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  if (steps == 0) return;
  zoom(std::pow(1.25, steps), event->position().x());
  event->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  const int row = eventAt(event->position());
  if (row >= 0) {
    setSelectedRow(row);
    emit eventClicked(row);
    return;
  }
  m_dragging = true;
  m_dragX = event->position().x();
  m_dragStartMs = m_startMs;
  setCursor(Qt::ClosedHandCursor);
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* event) {
  if (!m_dragging) return;
  const double span = m_endMs - m_startMs;
  const double dx = event->position().x() - m_dragX;
  m_startMs = m_dragStartMs - dx / plotRect().width() * span;
  m_endMs = m_startMs + span;
  layoutMarkers();
  update();
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent*) {
  m_dragging = false;
  unsetCursor();
}

void TimelineWidget::mouseDoubleClickEvent(QMouseEvent*) { fitAll(); }

void TimelineWidget::keyPressEvent(QKeyEvent* event) {
  const double mid = plotRect().center().x();
  const double span = m_endMs - m_startMs;
  switch (event->key()) {
    case Qt::Key_Plus: case Qt::Key_Equal: zoom(1.5, mid); break;
    case Qt::Key_Minus: zoom(1 / 1.5, mid); break;
    case Qt::Key_Left: m_startMs -= span / 10; m_endMs -= span / 10; layoutMarkers(); update(); break;
    case Qt::Key_Right: m_startMs += span / 10; m_endMs += span / 10; layoutMarkers(); update(); break;
    case Qt::Key_0: case Qt::Key_Home: fitAll(); break;
    default: QWidget::keyPressEvent(event);
  }
}

bool TimelineWidget::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const int row = eventAt(help->pos());
    if (row >= 0)
      QToolTip::showText(help->globalPos(), m_model->describe(row), this);
    else
      QToolTip::hideText();
    return true;
  }
  return QWidget::event(event);
}

}  // namespace idem::ui
