#pragma once
// The replay trace: a custom-painted timeline of one key. Each generation's validity
// window is shaded, its expiry marked, a processing generation's lease drawn as a bar,
// and every event is a marker coloured and shaped by its outcome, one lane per kind.
// Wheel zooms around the pointer, dragging pans, double-click fits; hovering an event
// shows its details.
#include <QWidget>
#include <string>
#include <vector>

class QPainter;

namespace idem::ui {

class EventModel;

class TimelineWidget final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TimelineWidget)

 public:
  explicit TimelineWidget(EventModel* model, QWidget* parent = nullptr);

  /// Shows everything: the events and the generations' starts.
  void fitAll();
  /// Zooms by factor (> 1 zooms in) around the time at widget x.
  void zoom(double factor, double x);
  void setSelectedRow(int row);

  [[nodiscard]] int markerCount() const { return static_cast<int>(m_markers.size()); }
  /// Where event row's marker is drawn (widget coordinates), after the last layout.
  [[nodiscard]] QPointF markerPosition(int row) const;
  /// The event row whose marker is within a few pixels of pos, or -1.
  [[nodiscard]] int eventAt(const QPointF& pos) const;
  /// Where the axis' tick labels were drawn at the last paint (widget coordinates).
  [[nodiscard]] const std::vector<QRectF>& tickLabelRects() const { return m_tickLabels; }
  [[nodiscard]] double viewStartMs() const { return m_startMs; }
  [[nodiscard]] double viewEndMs() const { return m_endMs; }

  [[nodiscard]] QSize sizeHint() const override;
  [[nodiscard]] QSize minimumSizeHint() const override;

 signals:
  void eventClicked(int row);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  bool event(QEvent* event) override;

 private:
  [[nodiscard]] double xOf(double ms) const;
  [[nodiscard]] double msAt(double x) const;
  [[nodiscard]] QRectF plotRect() const;
  [[nodiscard]] static int laneOf(const std::string& outcome);
  [[nodiscard]] double laneY(int lane) const;
  void layoutMarkers();
  void paintAxis(QPainter& p, const QRectF& plot);
  void paintGenerations(QPainter& p, const QRectF& plot);
  void paintMarkers(QPainter& p);
  void paintLegend(QPainter& p);

  EventModel* m_model;
  double m_startMs = 0;
  double m_endMs = 1;
  std::vector<QPointF> m_markers;
  std::vector<QRectF> m_tickLabels;  // one per event row, recomputed on every view change
  int m_selected = -1;
  bool m_dragging = false;
  double m_dragX = 0;
  double m_dragStartMs = 0;
};

}  // namespace idem::ui
