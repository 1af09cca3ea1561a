#pragma once
// Every chart can be exported (docs/design.md §7): PNG from the widget's pixels, SVG as vectors through
// QSvgGenerator. A small bar with a title and an "Export…" button sits above each chart.
#include <QWidget>

class QHBoxLayout;
class QLabel;

namespace idem::ui::sim {

/// Writes widget to path: ".svg" as vectors, anything else as PNG. False when it cannot be written.
bool exportWidget(QWidget* widget, const QString& path);

/// A chart with a caption and an Export… button that asks for a PNG or SVG file name.
class ChartFrame final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ChartFrame)

 public:
  ChartFrame(const QString& caption, QWidget* chart, QWidget* parent = nullptr);
  /// Extra controls to the left of the Export button.
  void addControl(QWidget* control);
  void setCaption(const QString& caption);
  [[nodiscard]] QWidget* chart() const { return m_chart; }

 signals:
  /// Export finished: the path written, or an error message for the status bar.
  void message(const QString& text);

 private:
  void exportChart();

  QLabel* m_caption;
  QWidget* m_chart;
  QHBoxLayout* m_bar;
};

}  // namespace idem::ui::sim
