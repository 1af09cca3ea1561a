#pragma once
// Runs simulations off the GUI thread (docs/design.md §7: anything over ~100 ms), one after another on a
// thread of its own, with overall progress and a cancel that stops the core engine within
// ~65 k events (RunControl::cancel). Starting again cancels the run in progress; its late
// answers are dropped by a generation number.
#include <QList>
#include <QObject>
#include <atomic>
#include <memory>
#include <vector>

#include "core/sim/config.h"
#include "core/sim/result.h"

class QThread;

namespace idem::ui::sim {

using ResultPtr = std::shared_ptr<const idem::sim::Result>;

class SimRunner final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(SimRunner)

 public:
  explicit SimRunner(QObject* parent = nullptr);
  /// Cancels a run in progress and waits for its thread.
  ~SimRunner() override;

  /// Runs configs in order; resultReady for each, then finished. Cancels a previous run.
  void start(std::vector<idem::sim::SimConfig> configs);
  /// Stops the run in progress; finished(true) follows once the engine has stopped.
  void cancel();
  [[nodiscard]] bool isRunning() const { return m_running; }
  /// True while a worker thread (perhaps a cancelled one, still stopping) is alive.
  [[nodiscard]] bool isBusy() const { return !m_threads.isEmpty(); }
  /// Results of the last run so far, in config order (a cancelled run may have fewer).
  [[nodiscard]] const QList<ResultPtr>& results() const { return m_results; }

 signals:
  /// Share of the whole run done (0..1).
  void progress(double fraction);
  void resultReady(int index, const idem::ui::sim::ResultPtr& result);
  void finished(bool cancelled);

 private:
  struct Job;
  void deliver(quint64 generation, int index, ResultPtr result);
  void done(quint64 generation, bool cancelled);

  quint64 m_generation = 0;
  bool m_running = false;
  std::shared_ptr<std::atomic<bool>> m_cancel;
  QList<ResultPtr> m_results;
  QList<QThread*> m_threads;  // ours until they finish (a cancelled one may still be stopping)
};

}  // namespace idem::ui::sim
