#pragma once
// A what-if curve against the TTL on a logarithmic time axis (miss rate, or storage), with
// the current and recommended TTLs as dashed lines and the candidate as a dot on the curve.
#include <QChartView>
#include <QList>
#include <QPointF>

class QCategoryAxis;
class QLineSeries;
class QScatterSeries;
class QValueAxis;

namespace idem::ui {

class CurveChart final : public QChartView {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(CurveChart)

 public:
  /// title: "Retries after expiry"; yTitle: "% of retries"; colour: the curve's.
  CurveChart(const QString& title, const QString& yTitle, const QColor& colour, QWidget* parent = nullptr);
  ~CurveChart() override;

  /// points: (TTL in ms, value), ascending TTL; those in [fromMs, toMs] are drawn. yScale
  /// divides the values for display (bytes → MB by passing 1024²); yCap bounds the axis (100 %).
  void setCurve(const QList<QPointF>& points, double yScale, const QString& yTitle, double fromMs, double toMs,
                double yCap = 0);
  /// The current, recommended and candidate TTLs (ms) and the candidate's value (unscaled);
  /// recommendedMs <= 0 draws no recommendation line.
  void setMarkers(double currentMs, double recommendedMs, double candidateMs, double candidateValue);

  [[nodiscard]] int pointCount() const;
  [[nodiscard]] bool showsRecommendation() const;

 private:
  QCategoryAxis* m_x;
  QValueAxis* m_y;
  QLineSeries* m_curve;
  QLineSeries* m_current;
  QLineSeries* m_recommended;
  QScatterSeries* m_candidate;
  double m_yScale = 1;
};

}  // namespace idem::ui
