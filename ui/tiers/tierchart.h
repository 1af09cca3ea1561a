#pragma once
// The tiers chart: one row per tier on a logarithmic time axis, its TTL as a bar, the observed
// retry offsets (p50, p90, p99, max) as markers and its reference windows as lines. A tier whose
// retries or windows outrun its TTL has its bar in the colour of what then happens (magenta:
// executed again; red: rejected) and the reason written next to it. The bars are a stacked
// series of three sets (one per colour) in which each tier has a value in exactly one.
#include <QChartView>
#include <QList>
#include <QPointF>

#include "core/tiers/tiers.h"

class QBarCategoryAxis;
class QCategoryAxis;
class QGraphicsSimpleTextItem;
class QHorizontalStackedBarSeries;
class QBarSet;

namespace idem::ui {

class TierChart final : public QChartView {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TierChart)

 public:
  explicit TierChart(QWidget* parent = nullptr);
  ~TierChart() override;

  void setReport(const tiers::Report& report);

  /// Bars drawn: one per tier.
  [[nodiscard]] int barCount() const;
  /// The words written next to flagged tiers, top to bottom.
  [[nodiscard]] QStringList flagTexts() const;
  /// The short reason shown for a flagged tier ("too short: channel_retry 3 days, …").
  [[nodiscard]] static QString shortReason(const tiers::TierReport& tier);

 private:
  enum class Kind { Flag, Window };
  struct Annotation {
    QGraphicsSimpleTextItem* item;
    Kind kind;
    int row;
    double x;  // chart x; flags start at the plot's left edge
  };
  void addAnnotation(const QString& text, Kind kind, int row, double x, const QColor& colour);
  void placeAnnotations();
  void barHovered(bool status, int index);

  QCategoryAxis* m_axisX;
  QBarCategoryAxis* m_axisY;
  QHorizontalStackedBarSeries* m_bars = nullptr;
  QList<QBarSet*> m_sets;  // TTL as it is; too short, late retries execute; too short, rejected
  QList<Annotation> m_annotations;
  double m_origin = 0;  // log10(ms) at the axis' left end: chart x = log10(ms) - m_origin
  QStringList m_tooltips;
};

}  // namespace idem::ui
