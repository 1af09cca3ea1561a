#pragma once
// Load over time from one run's per-second series: operations offered, attempts sent,
// successes and requests in flight at the server, with each spike or outage shaded. A storm
// shows as attempts climbing away from offered while successes fall.
#include <QChartView>

class QValueAxis;

#include "ui/sim/simrunner.h"

namespace idem::ui::sim {

class LoadChart final : public QChartView {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(LoadChart)

 public:
  explicit LoadChart(QWidget* parent = nullptr);
  void setResult(const ResultPtr& result, const QString& title);
  /// Seconds plotted, for tests.
  [[nodiscard]] int seconds() const { return m_seconds; }

 private:
  // Created once: Qt Charts leaves stale labels behind when axes are removed and re-added.
  QValueAxis* m_x;
  QValueAxis* m_rate;
  QValueAxis* m_inFlight;
  int m_seconds = 0;
};

}  // namespace idem::ui::sim
