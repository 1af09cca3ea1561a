#include "ui/common/dbsession.h"

#include <QCoreApplication>
#include <QThreadPool>
#include <mutex>
#include <vector>

namespace idem::ui {
namespace {

// Cancel requests open a connection of their own (a network round trip): one pool thread
// sends them, in the order asked, never the GUI thread. A single thread also orders a
// session's last cancel before its thread is told to quit.
QThreadPool& cancelPool() {
  static QThreadPool* pool = [] {
    auto* p = new QThreadPool;
    p->setMaxThreadCount(1);
    return p;
  }();
  return *pool;
}

// Worker threads of ended sessions, until each has finished and been deleted. The GUI thread
// never waits for them while the console runs; when the application object goes, the
// remaining ones are waited for (a job's cancel has been sent) so none is destroyed running.
class EndingWorkers {
 public:
  static EndingWorkers& instance() {
    static EndingWorkers* workers = new EndingWorkers;  // outlives every session
    return *workers;
  }

  void add(QThread* thread) {
    {
      std::lock_guard lock(m_mutex);
      m_threads.push_back(thread);
    }
    QObject::connect(thread, &QThread::finished, thread, [this, thread] {
      remove(thread);
      thread->deleteLater();
    });
  }

  int count() {
    std::lock_guard lock(m_mutex);
    return static_cast<int>(m_threads.size());
  }

  static void waitForAllAtExit() {
    auto& self = instance();
    cancelPool().waitForDone();
    std::vector<QThread*> left;
    {
      std::lock_guard lock(self.m_mutex);
      left.swap(self.m_threads);
    }
    for (QThread* t : left) {
      t->disconnect();
      t->wait();
      delete t;
    }
  }

 private:
  EndingWorkers() { qAddPostRoutine(&EndingWorkers::waitForAllAtExit); }

  void remove(QThread* thread) {
    std::lock_guard lock(m_mutex);
    std::erase(m_threads, thread);
  }

  std::mutex m_mutex;
  std::vector<QThread*> m_threads;
};

}  // namespace

DbSession::DbSession(const QString& name, QObject* parent)
    : QObject(parent),
      m_outbox(std::make_shared<SessionOutbox>(this)),
      m_thread(new QThread),
      m_worker(new DbWorker(m_outbox)) {
  m_thread->setObjectName(name);
  m_worker->moveToThread(m_thread);
  // The worker (and its connection) is destroyed on its own thread when the thread ends.
  connect(m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  m_thread->start();
}

DbSession::~DbSession() {
  // Nothing the worker still does reaches this object from now on.
  m_outbox->close();
  // Stop whatever runs now, then let the thread end; neither is waited for here.
  EndingWorkers::instance().add(m_thread);
  cancelPool().start([w = m_worker, t = m_thread] {
    w->cancel(0);
    t->quit();
  });
}

int DbSession::endingWorkers() { return EndingWorkers::instance().count(); }

void DbSession::open(const ConnectParams& params) {
  QMetaObject::invokeMethod(m_worker, [w = m_worker, params] { w->open(params); }, Qt::QueuedConnection);
}

void DbSession::close() {
  QMetaObject::invokeMethod(m_worker, [w = m_worker] { w->close(); }, Qt::QueuedConnection);
  m_state = State::Closed;
  emit stateChanged(m_state);
}

void DbSession::setPingInterval(int ms) {
  QMetaObject::invokeMethod(m_worker, [w = m_worker, ms] { w->setPingInterval(ms); }, Qt::QueuedConnection);
}

void DbSession::post(quint64 ticket, DbWorker::Job job) {
  QMetaObject::invokeMethod(
      m_worker, [w = m_worker, ticket, job = std::move(job)] { w->run(ticket, job); }, Qt::QueuedConnection);
}

void DbSession::cancel(quint64 ticket) {
  // PQcancel opens a short connection of its own: never on the GUI thread. The session's own
  // cancels run before its last one (one pool thread), so the worker is still there.
  cancelPool().start([w = m_worker, ticket] { w->cancel(ticket); });
}

void DbSession::workerConnecting(bool reconnecting) {
  m_state = reconnecting ? State::Reconnecting : State::Connecting;
  emit stateChanged(m_state);
}

void DbSession::workerOpened(const ServerInfo& info, const ConnectFailure& warning) {
  m_info = info;
  m_replication = {};  // read again by the next ping
  m_failure = warning;
  m_state = State::Connected;
  emit stateChanged(m_state);
  emit opened();
}

void DbSession::workerFailed(const ConnectFailure& failure) {
  m_failure = failure;
  m_state = failure.isTransient() ? State::Reconnecting : State::Failed;
  emit stateChanged(m_state);
}

void DbSession::workerReplication(const ReplicationState& r) { m_replication = r; }

void DbSession::workerRoundTrip(double ms) {
  m_roundTripMs = ms;
  emit roundTripMeasured(ms);
}

}  // namespace idem::ui
