#include "ui/sim/simrunner.h"

#include <QThread>

#include "core/sim/engine.h"

namespace idem::ui::sim {

SimRunner::SimRunner(QObject* parent) : QObject(parent) {}

SimRunner::~SimRunner() {
  if (m_cancel) m_cancel->store(true);
  for (QThread* t : m_threads) {
    t->wait();
    delete t;
  }
}

void SimRunner::start(std::vector<idem::sim::SimConfig> configs) {
  cancel();
  const quint64 generation = ++m_generation;
  m_cancel = std::make_shared<std::atomic<bool>>(false);
  m_results.clear();
  m_running = true;
  emit progress(0);
  // The worker owns copies of everything it reads: the configs, the cancel flag. It talks back
  // only through queued calls on this object, which carry the generation so a cancelled run's
  // late answers are recognised and dropped.
  // `self` outlives the thread: the destructor cancels and waits for it.
  SimRunner* self = this;
  auto cancelFlag = m_cancel;
  QThread* thread = QThread::create([self, configs = std::move(configs), cancelFlag, generation] {
    const double n = static_cast<double>(configs.size());
    auto lastPosted = std::make_shared<int>(-1);
    bool cancelled = false;
    for (std::size_t i = 0; i < configs.size() && !cancelled; ++i) {
      idem::sim::RunControl control;
      control.cancel = cancelFlag.get();
      control.onProgress = [&, i](double f) {
        const int permille = static_cast<int>(1000 * (static_cast<double>(i) + f) / n);
        if (permille == *lastPosted) return;
        *lastPosted = permille;
        QMetaObject::invokeMethod(
            self,
            [self, generation, permille] {
              if (generation == self->m_generation) emit self->progress(permille / 1000.0);
            },
            Qt::QueuedConnection);
      };
      auto result = std::make_shared<const idem::sim::Result>(idem::sim::simulate(configs[i], control));
      cancelled = result->cancelled || cancelFlag->load();
      if (!cancelled)
        QMetaObject::invokeMethod(
            self, [self, generation, i, result] { self->deliver(generation, static_cast<int>(i), result); },
            Qt::QueuedConnection);
    }
    QMetaObject::invokeMethod(
        self, [self, generation, cancelled] { self->done(generation, cancelled); }, Qt::QueuedConnection);
  });
  m_threads.append(thread);
  connect(thread, &QThread::finished, this, [this, thread] {
    m_threads.removeOne(thread);
    thread->deleteLater();
  });
  thread->start(QThread::LowPriority);
}

void SimRunner::cancel() {
  if (m_cancel) m_cancel->store(true);
  if (!m_running) return;
  // The engine stops within ~65 k events; report now so the UI is free at once. The thread's
  // own late answers carry the old generation and are ignored.
  m_running = false;
  ++m_generation;
  emit finished(true);
}

void SimRunner::deliver(quint64 generation, int index, ResultPtr result) {
  if (generation != m_generation) return;
  m_results.append(result);
  emit resultReady(index, result);
}

void SimRunner::done(quint64 generation, bool cancelled) {
  if (generation != m_generation) return;
  m_running = false;
  emit progress(1);
  emit finished(cancelled);
}

}  // namespace idem::ui::sim
