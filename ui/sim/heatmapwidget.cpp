#include "ui/sim/heatmapwidget.h"

#include <QPainter>
#include <cmath>

#include "ui/sim/heatmapmodel.h"

using namespace Qt::StringLiterals;

namespace idem::ui::sim {

QColor heatColour(double p) {
  if (p <= 0) return QColor(0xfa, 0xfa, 0xfa);
  // 1 per million → faint, 10 % and above → full magenta.
  const double t = std::clamp((std::log10(p) + 6.0) / 5.0, 0.0, 1.0);
  const QColor full(0xc0, 0x1c, 0x8c);
  const QColor faint(0xf6, 0xd5, 0xea);
  auto mix = [t](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
  return QColor(mix(faint.red(), full.red()), mix(faint.green(), full.green()), mix(faint.blue(), full.blue()));
}

HeatmapWidget::HeatmapWidget(HeatmapModel* model, QWidget* parent) : QWidget(parent), m_model(model) {
  setObjectName(u"duplicate-heatmap"_s);
  setAttribute(Qt::WA_OpaquePaintEvent);
  connect(model, &QAbstractItemModel::dataChanged, this, qOverload<>(&QWidget::update));
  connect(model, &QAbstractItemModel::modelReset, this, qOverload<>(&QWidget::update));
}

void HeatmapWidget::setTitle(const QString& title) {
  m_title = title;
  update();
}

void HeatmapWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), Qt::white);
  const QFontMetrics fm(font());
  const int rows = m_model->rowCount();
  const int cols = m_model->columnCount();
  const int titleH = fm.height() + 8;
  const int legendH = fm.height() + 14;
  const int left = fm.horizontalAdvance(tr("TTL")) + fm.horizontalAdvance(u"24 h 00 min"_s) + 10;
  const int bottom = 2 * fm.height() + 10 + legendH;
  const QRect grid(left, titleH, std::max(10, width() - left - 10), std::max(10, height() - titleH - bottom));
  p.setPen(Qt::black);
  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.drawText(QRect(0, 0, width(), titleH), Qt::AlignCenter,
             m_title.isEmpty() ? tr("P(duplicate) over TTL × backoff cap") : m_title);
  p.setFont(font());
  if (rows == 0 || cols == 0) return;
  const double cw = static_cast<double>(grid.width()) / cols;
  const double ch = static_cast<double>(grid.height()) / rows;
  for (int r = 0; r < rows; ++r) {
    // Longest TTL at the top, as a y axis grows upwards.
    const int row = rows - 1 - r;
    const QRectF rowRect(0, grid.top() + r * ch, left - 6, ch);
    p.setPen(Qt::black);
    p.drawText(rowRect, Qt::AlignRight | Qt::AlignVCenter, m_model->headerData(row, Qt::Vertical).toString());
    for (int c = 0; c < cols; ++c) {
      const QRectF cell(grid.left() + c * cw, grid.top() + r * ch, cw, ch);
      const auto v = m_model->cell(row, c);
      p.fillRect(cell.adjusted(1, 1, -1, -1), v ? heatColour(*v) : QColor(0xe8, 0xe8, 0xe8));
      const QString text = v ? formatDuplicateShare(*v) : tr("…");
      p.setPen(v && *v > 0.003 ? Qt::white : QColor(0x33, 0x33, 0x33));
      p.drawText(cell, Qt::AlignCenter, text);
    }
  }
  p.setPen(Qt::black);
  for (int c = 0; c < cols; ++c)
    p.drawText(QRectF(grid.left() + c * cw, grid.bottom() + 4, cw, fm.height()), Qt::AlignCenter,
               m_model->headerData(c, Qt::Horizontal).toString());
  p.drawText(QRect(grid.left(), grid.bottom() + 4 + fm.height(), grid.width(), fm.height() + 4), Qt::AlignCenter,
             tr("backoff cap →"));
  p.save();
  p.translate(12, grid.center().y());
  p.rotate(-90);
  p.drawText(QRect(-grid.height() / 2, -fm.height(), grid.height(), fm.height() + 2), Qt::AlignCenter, tr("TTL →"));
  p.restore();
  // Legend: the log colour scale.
  const int ly = height() - legendH + 2;
  const QString stops[] = {u"0"_s, u"1/M"_s, u"10/M"_s, u"100/M"_s, u"0.1 %"_s, u"1 %"_s, u"≥10 %"_s};
  const double values[] = {0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1};
  const int sw = std::min(70, grid.width() / 7);
  p.drawText(QRect(0, ly, left - 6, fm.height() + 4), Qt::AlignRight | Qt::AlignVCenter, tr("P(dup)"));
  for (int i = 0; i < 7; ++i) {
    const QRect swatch(left + i * sw, ly, sw - 2, fm.height() + 4);
    p.fillRect(swatch, heatColour(values[i]));
    p.setPen(values[i] > 0.003 ? Qt::white : Qt::black);
    p.drawText(swatch, Qt::AlignCenter, stops[i]);
  }
}

}  // namespace idem::ui::sim
