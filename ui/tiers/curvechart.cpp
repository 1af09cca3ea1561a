#include "ui/tiers/curvechart.h"

#include <QCategoryAxis>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>
#include <algorithm>

#include "ui/tiers/logtimeaxis.h"

namespace idem::ui {

CurveChart::CurveChart(const QString& title, const QString& yTitle, const QColor& colour, QWidget* parent)
    : QChartView(new QChart, parent), m_x(new QCategoryAxis), m_y(new QValueAxis), m_curve(new QLineSeries),
      m_current(new QLineSeries), m_recommended(new QLineSeries), m_candidate(new QScatterSeries) {
  setRenderHint(QPainter::Antialiasing);
  setMinimumSize(240, 180);
  chart()->setTitle(title);
  chart()->setMargins(QMargins(4, 4, 18, 4));  // room for the last time label
  chart()->legend()->setAlignment(Qt::AlignBottom);
  m_x->setTitleText(tr("TTL (log scale)"));
  m_y->setTitleText(yTitle);
  chart()->addAxis(m_x, Qt::AlignBottom);
  chart()->addAxis(m_y, Qt::AlignLeft);

  m_curve->setName(title);
  m_curve->setPen(QPen(colour, 2));
  m_current->setName(tr("now"));
  m_current->setPen(QPen(QColor(0x55, 0x55, 0x55), 1.5, Qt::DashLine));
  m_recommended->setName(tr("recommended"));
  m_recommended->setPen(QPen(QColor(0x2e, 0x9e, 0x44), 1.5, Qt::DashLine));
  m_candidate->setName(tr("what if"));
  m_candidate->setMarkerSize(11);
  m_candidate->setColor(colour.darker(130));
  m_candidate->setBorderColor(Qt::white);
  for (QXYSeries* s : std::initializer_list<QXYSeries*>{m_curve, m_current, m_recommended, m_candidate}) {
    chart()->addSeries(s);
    s->attachAxis(m_x);
    s->attachAxis(m_y);
  }
  for (auto* marker : chart()->legend()->markers(m_curve)) marker->setVisible(false);  // the title says it
}

CurveChart::~CurveChart() = default;

int CurveChart::pointCount() const { return static_cast<int>(m_curve->count()); }

void CurveChart::setCurve(const QList<QPointF>& points, double yScale, const QString& yTitle, double fromMs,
                          double toMs, double yCap) {
  m_yScale = yScale > 0 ? yScale : 1;
  m_y->setTitleText(yTitle);
  QList<QPointF> scaled;
  scaled.reserve(points.size());
  double top = 0;
  for (const auto& p : points) {
    if (p.x() < fromMs || p.x() > toMs) continue;
    scaled << QPointF(logMs(p.x()), p.y() / m_yScale);
    top = std::max(top, p.y() / m_yScale);
  }
  m_curve->replace(scaled);
  setLogTimeRange(m_x, fromMs, toMs, true);
  m_y->setRange(0, top > 0 ? top * 1.08 : 1);
  m_y->applyNiceNumbers();
  if (yCap > 0 && m_y->max() > yCap) {
    m_y->setMax(yCap);
    m_y->setTickCount(5);
  }
  m_y->setLabelFormat(m_y->max() >= 20 ? QStringLiteral("%.0f") : m_y->max() >= 2 ? QStringLiteral("%.1f")
                                                                                  : QStringLiteral("%.2f"));
}

void CurveChart::setMarkers(double currentMs, double recommendedMs, double candidateMs, double candidateValue) {
  const double top = m_y->max();
  m_current->replace({QPointF(logMs(currentMs), 0), QPointF(logMs(currentMs), top)});
  // No recommendation (too few retries): no line, rather than one that looks like advice.
  if (recommendedMs > 0)
    m_recommended->replace({QPointF(logMs(recommendedMs), 0), QPointF(logMs(recommendedMs), top)});
  else
    m_recommended->clear();
  m_candidate->replace({QPointF(logMs(candidateMs), candidateValue / m_yScale)});
}

bool CurveChart::showsRecommendation() const { return m_recommended->count() > 0; }

}  // namespace idem::ui
