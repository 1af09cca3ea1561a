#include "ui/sim/loadchart.h"

#include <QAreaSeries>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QValueAxis>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace idem::ui::sim {

LoadChart::LoadChart(QWidget* parent)
    : QChartView(new QChart, parent), m_x(new QValueAxis), m_rate(new QValueAxis), m_inFlight(new QValueAxis) {
  setObjectName(u"load"_s);
  m_x->setLabelFormat(u"%d"_s);
  m_x->setTickCount(11);
  m_x->setTitleText(tr("simulated time (s)"));
  m_rate->setLabelFormat(u"%d"_s);
  m_rate->setTickCount(6);
  m_rate->setTitleText(tr("per second"));
  m_inFlight->setLabelFormat(u"%d"_s);
  m_inFlight->setTickCount(6);
  m_inFlight->setTitleText(tr("in flight at the server"));
  m_inFlight->setLinePenColor(QColor(0xd9, 0x8c, 0x00));
  m_inFlight->setLabelsColor(QColor(0xa0, 0x66, 0x00));
  m_inFlight->setGridLineVisible(false);
  chart()->addAxis(m_x, Qt::AlignBottom);
  chart()->addAxis(m_rate, Qt::AlignLeft);
  chart()->addAxis(m_inFlight, Qt::AlignRight);
  setRenderHint(QPainter::Antialiasing);
  chart()->legend()->setAlignment(Qt::AlignBottom);
  chart()->setMargins(QMargins(4, 4, 4, 4));
  setResult(nullptr, {});
}

void LoadChart::setResult(const ResultPtr& result, const QString& title) {
  QChart* c = chart();
  c->removeAllSeries();
  m_seconds = result ? static_cast<int>(result->series.size()) : 0;
  struct Column {
    QString name;
    QColor colour;
    std::int64_t idem::sim::SeriesRow::*field;
  };
  const Column columns[] = {
      {tr("offered (operations started)"), QColor(0x55, 0x55, 0x55), &idem::sim::SeriesRow::offered},
      {tr("attempts sent"), QColor(0x1f, 0x5f, 0xbf), &idem::sim::SeriesRow::attempts},
      {tr("successes"), QColor(0x2e, 0x8b, 0x3e), &idem::sim::SeriesRow::successes},
      {tr("in flight at the server (right axis)"), QColor(0xd9, 0x8c, 0x00), &idem::sim::SeriesRow::inFlight},
  };
  double top = 1;
  double topInFlight = 1;
  QList<QAbstractSeries*> series;
  QLineSeries* inFlight = nullptr;
  QList<QLineSeries*> bandTops;
  if (result) {
    for (const auto& col : columns) {
      auto* s = new QLineSeries;
      s->setName(col.name);
      QList<QPointF> points;
      points.reserve(m_seconds);
      for (int i = 0; i < m_seconds; ++i) {
        const double v = static_cast<double>(result->series[static_cast<std::size_t>(i)].*col.field);
        points.append({static_cast<double>(i), v});
        double& peak = col.field == &idem::sim::SeriesRow::inFlight ? topInFlight : top;
        peak = std::max(peak, v);
      }
      s->replace(points);
      if (col.field == &idem::sim::SeriesRow::inFlight) inFlight = s;
      s->setPen(QPen(col.colour, col.field == &idem::sim::SeriesRow::offered ? 1.5 : 2));
      series.append(s);
    }
    top *= 1.08;
    // Spikes and outages as shaded bands behind the lines.
    bool first = true;
    for (const auto& e : result->config.server.events) {
      const double from = idem::sim::toSeconds(e.at);
      const double to = idem::sim::toSeconds(e.at + e.duration);
      auto* upper = new QLineSeries;
      upper->append(from, 0);
      upper->append(to, 0);
      bandTops.append(upper);
      auto* band = new QAreaSeries(upper);
      band->setName(first ? (e.outage                   ? tr("outage")
                             : e.extraRatePerSecond > 0 ? tr("spike")
                                                        : tr("failure window"))
                          : QString());
      band->setColor(QColor(0xd0, 0x30, 0x30, 40));
      band->setBorderColor(QColor(0xd0, 0x30, 0x30, 90));
      series.prepend(band);
      first = false;
    }
  }
  m_x->setRange(0, std::max(1, m_seconds));
  m_rate->setRange(0, top);
  m_rate->applyNiceNumbers();
  for (QLineSeries* upper : bandTops)  // full height, once the axis has its final range
    upper->replace({{upper->at(0).x(), m_rate->max()}, {upper->at(1).x(), m_rate->max()}});
  m_inFlight->setRange(0, topInFlight * 1.08);
  m_inFlight->applyNiceNumbers();
  for (QAbstractSeries* s : series) {
    c->addSeries(s);
    s->attachAxis(m_x);
    s->attachAxis(s == inFlight ? m_inFlight : m_rate);
  }
  for (QLegendMarker* m : c->legend()->markers())
    if (m->label().isEmpty()) m->setVisible(false);
  c->setTitle(result ? tr("Load over time — %1").arg(title) : tr("Load over time (run the simulation)"));
}

}  // namespace idem::ui::sim
