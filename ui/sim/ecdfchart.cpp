#include "ui/sim/ecdfchart.h"

#include <QLineSeries>
#include <QLogValueAxis>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "ui/sim/comparisonmodel.h"

using namespace Qt::StringLiterals;

namespace idem::ui::sim {
namespace {

constexpr int kMaxRetriesShown = 4;
const QColor kRetryColours[kMaxRetriesShown] = {QColor(0x1f, 0x77, 0xb4), QColor(0x2c, 0xa0, 0x8c),
                                                QColor(0x8c, 0x56, 0x4b), QColor(0x7f, 0x7f, 0x7f)};
const QColor kDuplicateMagenta(0xc0, 0x1c, 0x8c);

QLineSeries* verticalLine(double x, const QString& name, const QColor& colour, Qt::PenStyle style) {
  auto* s = new QLineSeries;
  s->setName(name);
  s->append(x, 0);
  s->append(x, 1);
  QPen pen(colour, 2, style);
  s->setPen(pen);
  return s;
}

}  // namespace

EcdfChart::EcdfChart(QWidget* parent) : QChartView(new QChart, parent), m_x(new QLogValueAxis), m_y(new QValueAxis) {
  setObjectName(u"attempt-offsets"_s);
  m_x->setBase(10);
  m_x->setLabelFormat(u"%g"_s);
  m_x->setTitleText(tr("seconds after the operation's first attempt (log)"));
  m_x->setMinorTickCount(-1);
  m_y->setRange(0, 1);
  m_y->setTickCount(6);
  m_y->setLabelFormat(u"%.1f"_s);
  m_y->setTitleText(tr("share of retries sent by then"));
  chart()->addAxis(m_x, Qt::AlignBottom);
  chart()->addAxis(m_y, Qt::AlignLeft);
  setRenderHint(QPainter::Antialiasing);
  chart()->legend()->setAlignment(Qt::AlignBottom);
  chart()->setMargins(QMargins(4, 4, 4, 4));
  setResults(nullptr, {}, nullptr, {});
}

void EcdfChart::setResults(const ResultPtr& a, const QString& titleA, const ResultPtr& b, const QString& titleB) {
  QChart* c = chart();
  c->removeAllSeries();
  m_curves = 0;
  double lo = 1e9;
  double hi = 0;
  const ResultPtr results[2] = {a, b};
  const QString titles[2] = {titleA, titleB};
  QList<QAbstractSeries*> series;
  for (int k = 0; k < 2; ++k) {
    if (!results[k]) continue;
    for (const auto& o : results[k]->offsets) {
      const int retry = o.attempt - 1;
      if (retry < 1 || retry > kMaxRetriesShown || o.count == 0 || o.ecdf.size() < 2) continue;
      auto* s = new QLineSeries;
      s->setName(tr("%1 retry %2").arg(k == 0 ? u"A"_s : u"B"_s).arg(retry));
      QList<QPointF> points;
      const auto n = static_cast<double>(o.ecdf.size() - 1);
      for (std::size_t j = 0; j < o.ecdf.size(); ++j) {
        const double x = std::max(o.ecdf[j], 1e-3);
        points.append({x, static_cast<double>(j) / n});
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      s->replace(points);
      s->setPen(QPen(kRetryColours[retry - 1], 2, k == 0 ? Qt::SolidLine : Qt::DashLine));
      series.append(s);
      ++m_curves;
    }
  }
  const ResultPtr& any = a ? a : b;
  if (any) {
    const double ttl = idem::sim::toSeconds(any->config.store.ttl + any->config.store.purgeLag);
    series.append(
        verticalLine(ttl, tr("TTL + purge lag (%1)").arg(formatSeconds(ttl)), kDuplicateMagenta, Qt::SolidLine));
    lo = std::min(lo, ttl);
    hi = std::max(hi, ttl);
    for (int k = 0; k < 2; ++k) {
      if (!results[k] || !results[k]->horizon.value) continue;
      const double h = idem::sim::toSeconds(*results[k]->horizon.value);
      if (h <= 0) continue;
      series.append(verticalLine(h, tr("H of %1 (%2)").arg(k == 0 ? u"A"_s : u"B"_s, formatSeconds(h)),
                                 QColor(0x55, 0x55, 0x55), k == 0 ? Qt::DotLine : Qt::DashDotLine));
      lo = std::min(lo, h);
      hi = std::max(hi, h);
    }
  }
  if (hi <= 0) {
    lo = 0.1;
    hi = 100;
  }
  m_x->setRange(std::pow(10, std::floor(std::log10(lo))), std::pow(10, std::ceil(std::log10(hi * 1.2))));
  for (QAbstractSeries* s : series) {
    c->addSeries(s);
    s->attachAxis(m_x);
    s->attachAxis(m_y);
  }
  QStringList names;
  if (a) names << titleA;
  if (b) names << titleB;
  c->setTitle(any ? tr("When retries are sent — %1").arg(names.join(tr(" vs ")))
                  : tr("When retries are sent (run the simulation)"));
}

}  // namespace idem::ui::sim
