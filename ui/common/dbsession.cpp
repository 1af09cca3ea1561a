#include "ui/common/dbsession.h"

#include <QThreadPool>

namespace idem::ui {

DbSession::DbSession(const QString& name, QObject* parent) : QObject(parent), m_worker(new DbWorker(this)) {
  m_cancelPool.setMaxThreadCount(1);
  m_thread.setObjectName(name);
  m_worker->moveToThread(&m_thread);
  // The worker (and its connection) is destroyed on its own thread when the thread ends.
  connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  m_thread.start();
}

DbSession::~DbSession() {
  // Stop whatever runs now so waiting for the thread cannot hang the GUI on a slow query. The
  // cancel request is a network round trip of its own: the pool thread sends it, like cancel().
  m_cancelPool.start([w = m_worker] { w->cancel(0); });
  m_cancelPool.waitForDone();
  m_thread.quit();
  m_thread.wait();
}

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
  // PQcancel opens a short connection of its own: never on the GUI thread.
  m_cancelPool.start([w = m_worker, ticket] { w->cancel(ticket); });
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
