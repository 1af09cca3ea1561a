#pragma once
// When retries arrive: for each retry (attempt 2, 3, …) the ECDF of its offset after the
// operation's first attempt, on a log time axis, policy A solid and B dashed, with the TTL
// (+ purge lag) as a vertical magenta line. A curve crossing that line is a retry that can
// find its key purged: a possible duplicate charge.
#include <QChartView>

class QLogValueAxis;
class QValueAxis;

#include "ui/sim/simrunner.h"

namespace idem::ui::sim {

class EcdfChart final : public QChartView {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(EcdfChart)

 public:
  explicit EcdfChart(QWidget* parent = nullptr);
  /// Either result may be null. Shows at most the first four retries of each.
  void setResults(const ResultPtr& a, const QString& titleA, const ResultPtr& b, const QString& titleB);
  /// Curves drawn (one per retry number and policy), for tests.
  [[nodiscard]] int curveCount() const { return m_curves; }

 private:
  // Created once: Qt Charts leaves stale labels behind when axes are removed and re-added.
  QLogValueAxis* m_x;
  QValueAxis* m_y;
  int m_curves = 0;
};

}  // namespace idem::ui::sim
