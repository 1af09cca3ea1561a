#pragma once
// Paints a HeatmapModel: TTL down, backoff cap across, each cell shaded by P(duplicate) on a
// log scale from white (none) to magenta (the colour of a duplicate charge), with its value.
#include <QWidget>

namespace idem::ui::sim {

class HeatmapModel;

class HeatmapWidget final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(HeatmapWidget)

 public:
  explicit HeatmapWidget(HeatmapModel* model, QWidget* parent = nullptr);
  void setTitle(const QString& title);
  QSize sizeHint() const override { return {640, 420}; }
  QSize minimumSizeHint() const override { return {360, 260}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  HeatmapModel* m_model;
  QString m_title;
};

/// The cell colour for P(duplicate) p (p ≤ 0: white).
[[nodiscard]] QColor heatColour(double p);

}  // namespace idem::ui::sim
