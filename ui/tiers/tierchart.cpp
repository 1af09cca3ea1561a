#include "ui/tiers/tierchart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCategoryAxis>
#include <QGraphicsSimpleTextItem>
#include <QHorizontalStackedBarSeries>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QToolTip>
#include <algorithm>

#include "ui/common/outcomestyle.h"
#include "ui/common/timefmt.h"
#include "ui/tiers/logtimeaxis.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
using tiers::Millis;
namespace {

const QColor kTtlColour(0x9d, 0xb9, 0xd9);  // a light "executed" blue: the window a key is honoured
const QColor kWindowColour(0x33, 0x33, 0x33);

QColor flagColour(const tiers::TierReport& t) {
  return outcomeStyle(t.tier.onExpired == policy::OnExpired::Execute ? trace::Outcome::ExecutedAfterExpiry
                                                                     : trace::Outcome::RejectedExpired)
      .color;
}

double ms(Millis d) { return static_cast<double>(d.count()); }

}  // namespace

TierChart::TierChart(QWidget* parent)
    : QChartView(new QChart, parent), m_axisX(new QCategoryAxis), m_axisY(new QBarCategoryAxis) {
  setRenderHint(QPainter::Antialiasing);
  setMinimumHeight(240);
  chart()->setTitle(tr("Key TTL against observed client retries"));
  chart()->legend()->setAlignment(Qt::AlignBottom);
  chart()->setMargins(QMargins(6, 6, 24, 6));  // room for the last time label
  m_axisX->setTitleText(tr("time after the key's first request (log scale)"));
  m_axisX->setGridLineVisible(true);
  chart()->addAxis(m_axisX, Qt::AlignBottom);
  chart()->addAxis(m_axisY, Qt::AlignLeft);
  connect(chart(), &QChart::plotAreaChanged, this, &TierChart::placeAnnotations);
}

TierChart::~TierChart() = default;

int TierChart::barCount() const {
  int n = 0;
  for (const QBarSet* set : m_sets)
    for (int i = 0; i < set->count(); ++i) n += set->at(i) > 0 ? 1 : 0;
  return n;
}

QStringList TierChart::flagTexts() const {
  QStringList out;
  for (const auto& a : m_annotations)
    if (a.item->text().startsWith(u"⚠"_s)) out << a.item->text();
  return out;
}

QString TierChart::shortReason(const tiers::TierReport& t) {
  QStringList parts;
  const auto& o = t.retries.offsets;
  if (o && o->p999 >= ms(t.tier.ttl))
    parts << tr("p99.9 of retries at %1").arg(formatDuration(static_cast<qint64>(o->p999)));
  for (const auto& [name, window] : t.tier.referenceWindows)
    if (window > t.tier.ttl) parts << tr("%1 window %2").arg(QString::fromStdString(name), formatDuration(window.count()));
  if (parts.isEmpty()) return {};
  const QString consequence = t.tier.onExpired == policy::OnExpired::Execute ? tr("late retries execute again")
                                                                             : tr("late retries are rejected");
  return tr("⚠ TTL %1 too short — outrun by %2: %3")
      .arg(formatDuration(t.tier.ttl.count()), parts.join(u", "_s), consequence);
}

void TierChart::addAnnotation(const QString& text, Kind kind, int row, double x, const QColor& colour) {
  auto* item = new QGraphicsSimpleTextItem(text, chart());
  QFont f = font();
  f.setPointSizeF(f.pointSizeF() * (kind == Kind::Flag ? 0.95 : 0.85));
  f.setBold(kind == Kind::Flag);
  item->setFont(f);
  item->setBrush(colour);
  item->setZValue(20);
  m_annotations.append({item, kind, row, x});
}

void TierChart::setReport(const tiers::Report& report) {
  chart()->removeAllSeries();
  for (auto& a : m_annotations) delete a.item;
  m_annotations.clear();
  m_tooltips.clear();
  m_bars = nullptr;
  m_sets.clear();

  QStringList categories;
  double lo = 1e300, hi = 1;
  auto span = [&](double v) {
    if (v <= 0) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  for (const auto& t : report.tiers) {
    categories << QString::fromStdString(t.tier.name);
    span(ms(t.tier.ttl));
    for (const auto& [name, w] : t.tier.referenceWindows) span(ms(w));
    if (const auto& o = t.retries.offsets) {
      span(o->p50);
      span(o->max);
    }
  }
  if (categories.isEmpty()) lo = 1000, hi = 8.64e7;
  // Room in each tier's band for its flag above the bar and its windows' names below.
  setMinimumHeight(150 + 78 * static_cast<int>(categories.size()));
  m_axisY->clear();
  m_axisY->append(categories);
  m_origin = setLogTimeRange(m_axisX, lo / 2, hi * 2.5, false, true);
  const auto x = [this](double valueMs) { return logMs(valueMs) - m_origin; };
  chart()->setTitle(tr("Key TTL against observed client retries — last %1").arg(formatDuration(report.since.count())));

  m_bars = new QHorizontalStackedBarSeries;
  m_bars->setBarWidth(0.3);
  const QString setNames[] = {tr("TTL (how long a key is honoured)"), tr("TTL too short: late retries execute again"),
                              tr("TTL too short: late retries are rejected")};
  const QColor setColours[] = {kTtlColour, outcomeStyle(trace::Outcome::ExecutedAfterExpiry).color,
                               outcomeStyle(trace::Outcome::RejectedExpired).color};
  for (int k = 0; k < 3; ++k) {
    auto* set = new QBarSet(setNames[k]);
    set->setColor(setColours[k]);
    set->setBorderColor(setColours[k].darker(140));
    m_sets << set;
  }
  for (const auto& t : report.tiers) {
    const int k = !t.flagged() ? 0 : t.tier.onExpired == policy::OnExpired::Execute ? 1 : 2;
    for (int j = 0; j < 3; ++j) *m_sets[j] << (j == k ? x(ms(t.tier.ttl)) : 0.0);
  }
  for (QBarSet* set : m_sets) m_bars->append(set);
  chart()->addSeries(m_bars);
  m_bars->attachAxis(m_axisX);
  m_bars->attachAxis(m_axisY);
  // A colour no tier has stays out of the legend.
  for (QBarSet* set : m_sets)
    if (set->sum() <= 0)
      for (auto* marker : chart()->legend()->markers(m_bars))
        if (marker->label() == set->label()) marker->setVisible(false);
  connect(m_bars, &QHorizontalStackedBarSeries::hovered, this,
          [this](bool status, int index, QBarSet*) { barHovered(status, index); });

  struct Marker {
    QString name;
    QScatterSeries::MarkerShape shape;
    double size;
    QColor colour;
    double tiers::Offsets::*field;
  };
  const Marker markers[] = {
      {tr("retries p50"), QScatterSeries::MarkerShapeCircle, 9, QColor(0x6b, 0x6b, 0x6b), &tiers::Offsets::p50},
      {tr("p90"), QScatterSeries::MarkerShapeTriangle, 11, QColor(0x4a, 0x4a, 0x4a), &tiers::Offsets::p90},
      {tr("p99"), QScatterSeries::MarkerShapeRectangle, 10, QColor(0x26, 0x26, 0x26), &tiers::Offsets::p99},
      {tr("max"), QScatterSeries::MarkerShapeStar, 14, QColor(0x00, 0x00, 0x00), &tiers::Offsets::max},
  };
  for (const auto& m : markers) {
    auto* s = new QScatterSeries;
    s->setName(m.name);
    s->setMarkerShape(m.shape);
    s->setMarkerSize(m.size);
    s->setColor(m.colour);
    s->setBorderColor(Qt::white);
    QList<QPointF> points;
    for (int i = 0; i < static_cast<int>(report.tiers.size()); ++i)
      if (const auto& o = report.tiers[static_cast<std::size_t>(i)].retries.offsets)
        points << QPointF(x((*o).*m.field), i);
    s->replace(points);
    chart()->addSeries(s);
    s->attachAxis(m_axisX);
    s->attachAxis(m_axisY);
  }

  bool windowInLegend = false;
  for (int i = 0; i < static_cast<int>(report.tiers.size()); ++i) {
    const auto& t = report.tiers[static_cast<std::size_t>(i)];
    for (const auto& [name, w] : t.tier.referenceWindows) {
      auto* line = new QLineSeries;
      line->setName(tr("reference window"));
      QPen pen(kWindowColour, 2, Qt::DashLine);
      line->setPen(pen);
      const double at = x(ms(w));
      line->replace({QPointF(at, i - 0.3), QPointF(at, i + 0.3)});
      chart()->addSeries(line);
      line->attachAxis(m_axisX);
      line->attachAxis(m_axisY);
      for (auto* marker : chart()->legend()->markers(line)) marker->setVisible(!windowInLegend);
      windowInLegend = true;
      addAnnotation(QString::fromStdString(name) % u" "_s % formatDuration(w.count()), Kind::Window, i, at,
                    kWindowColour);
    }
    if (t.flagged()) addAnnotation(shortReason(t), Kind::Flag, i, 0, flagColour(t));
    QString tip = QString::fromStdString(t.tier.name) % u": TTL "_s % formatDuration(t.tier.ttl.count());
    for (const auto& f : t.flags) tip += u"\n• "_s % QString::fromStdString(f);
    m_tooltips << tip;
  }
  placeAnnotations();
}

void TierChart::placeAnnotations() {
  if (!m_bars) return;
  const QRectF plot = chart()->plotArea();
  // A tier's band: the flag along its top, above the bar; the windows' names under the bar,
  // each to the right of its line, pushed down a line when it would overlap the previous one.
  std::vector<Annotation*> windows;
  for (auto& a : m_annotations) {
    const QRectF box = a.item->boundingRect();
    if (a.kind == Kind::Flag) {
      const QPointF top = chart()->mapToPosition(QPointF(m_axisX->min(), a.row + 0.5), m_bars);
      a.item->setPos(plot.left() + 6, top.y() + 2);
    } else {
      windows.push_back(&a);
    }
    a.item->setVisible(box.height() * 2.5 < plot.height() / std::max(1, m_axisY->count()));
  }
  std::sort(windows.begin(), windows.end(), [](const Annotation* a, const Annotation* b) {
    return a->row != b->row ? a->row < b->row : a->x < b->x;
  });
  QRectF previous;
  int previousRow = -1;
  for (Annotation* a : windows) {
    const QPointF at = chart()->mapToPosition(QPointF(a->x, a->row - 0.17), m_bars);
    QRectF box(QPointF(at.x() + 4, at.y()), a->item->boundingRect().size());
    if (box.right() > plot.right()) box.moveRight(at.x() - 4);
    if (a->row == previousRow && box.intersects(previous)) box.moveTop(previous.bottom());
    a->item->setPos(box.topLeft());
    previous = box;
    previousRow = a->row;
  }
}

void TierChart::barHovered(bool status, int index) {
  if (!status || index < 0 || index >= m_tooltips.size()) {
    QToolTip::hideText();
    return;
  }
  QToolTip::showText(QCursor::pos(), m_tooltips.at(index), this);
}

}  // namespace idem::ui
