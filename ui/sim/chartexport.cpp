#include "ui/sim/chartexport.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSvgGenerator>
#include <QVBoxLayout>

using namespace Qt::StringLiterals;

namespace idem::ui::sim {

bool exportWidget(QWidget* widget, const QString& path) {
  if (path.endsWith(u".svg"_s, Qt::CaseInsensitive)) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(widget->size());
    svg.setViewBox(QRect(QPoint(0, 0), widget->size()));
    svg.setTitle(widget->windowTitle());
    QPainter painter;
    if (!painter.begin(&svg)) return false;
    widget->render(&painter);
    return painter.end();
  }
  return widget->grab().save(path, "PNG");
}

ChartFrame::ChartFrame(const QString& caption, QWidget* chart, QWidget* parent)
    : QWidget(parent), m_caption(new QLabel(caption, this)), m_chart(chart), m_bar(new QHBoxLayout) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  m_caption->setWordWrap(true);
  m_bar->addWidget(m_caption, 1);
  auto* exportButton = new QPushButton(tr("Export…"), this);
  exportButton->setToolTip(tr("Save this chart as PNG or SVG"));
  connect(exportButton, &QPushButton::clicked, this, &ChartFrame::exportChart);
  m_bar->addWidget(exportButton);
  layout->addLayout(m_bar);
  chart->setParent(this);
  layout->addWidget(chart, 1);
}

void ChartFrame::addControl(QWidget* control) { m_bar->insertWidget(m_bar->count() - 1, control); }

void ChartFrame::setCaption(const QString& caption) { m_caption->setText(caption); }

void ChartFrame::exportChart() {
  QString filter;
  QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), m_chart->objectName() + u".png"_s,
                                              tr("PNG image (*.png);;SVG drawing (*.svg)"), &filter);
  if (path.isEmpty()) return;
  if (!path.contains(u'.')) path += filter.contains(u"svg"_s) ? u".svg"_s : u".png"_s;
  emit message(
      exportWidget(m_chart, path)
          ? tr("Saved %1").arg(path)
          : tr("Could not write %1: check that the folder exists and is writable, then export again.").arg(path));
}

}  // namespace idem::ui::sim
