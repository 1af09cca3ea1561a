#include "ui/sim/loadchart.h"

#include <QAreaSeries>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QValueAxis>
#include <algorithm>

using namespace Qt::StringLiterals;

namespace idem::ui::sim {

LoadChart::LoadChart(QWidget* parent) : QChartView(new QChart, parent) {
  setObjectName(u"load"_s);
  setRenderHint(QPainter::Antialiasing);
  chart()->legend()->setAlignment(Qt::AlignBottom);
  chart()->setMargins(QMargins(4, 4, 4, 4));
  setResult(nullptr, {});
}

void LoadChart::setResult(const ResultPtr& result, const QString& title) {
  QChart* c = chart();
  c->removeAllSeries();
  for (QAbstractAxis* axis : c->axes()) {
    c->removeAxis(axis);
    delete axis;
  }
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
      {tr("in flight at the server"), QColor(0xd9, 0x8c, 0x00), &idem::sim::SeriesRow::inFlight},
  };
  double top = 1;
  QList<QAbstractSeries*> series;
  if (result) {
    for (const auto& col : columns) {
      auto* s = new QLineSeries;
      s->setName(col.name);
      QList<QPointF> points;
      points.reserve(m_seconds);
      for (int i = 0; i < m_seconds; ++i) {
        const double v = static_cast<double>(result->series[static_cast<std::size_t>(i)].*col.field);
        points.append({static_cast<double>(i), v});
        top = std::max(top, v);
      }
      s->replace(points);
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
      upper->append(from, top);
      upper->append(to, top);
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
  auto* x = new QValueAxis;
  x->setRange(0, std::max(1, m_seconds));
  x->setLabelFormat(u"%d"_s);
  x->setTitleText(tr("simulated time (s)"));
  auto* y = new QValueAxis;
  y->setRange(0, top);
  y->setLabelFormat(u"%d"_s);
  y->setTitleText(tr("per second"));
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  for (QAbstractSeries* s : series) {
    c->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  for (QLegendMarker* m : c->legend()->markers())
    if (m->label().isEmpty()) m->setVisible(false);
  c->setTitle(result ? tr("Load over time — %1").arg(title) : tr("Load over time (run the simulation)"));
}

}  // namespace idem::ui::sim
