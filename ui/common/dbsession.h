#pragma once
// The GUI thread's handle on one worker connection. Views submit jobs (a function of the
// connection returning a value type) and get the answer back on the GUI thread; the GUI
// thread never waits on the database. Late answers are the views' business: each keeps a
// generation counter and drops answers to questions it no longer asks.
#include <QDateTime>
#include <QObject>
#include <QPointer>
#include <QThread>
#include <atomic>
#include <exception>
#include <functional>
#include <memory>

#include "ui/common/connectfailure.h"
#include "ui/common/connectparams.h"
#include "ui/common/dbresult.h"
#include "ui/common/dbworker.h"
#include "ui/common/replicationstate.h"
#include "ui/common/serverinfo.h"

namespace idem::ui {

class DbSession final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(DbSession)

 public:
  enum class State { Closed, Connecting, Connected, Failed, Reconnecting };
  Q_ENUM(State)

  explicit DbSession(const QString& name, QObject* parent = nullptr);
  ~DbSession() override;

  /// Opens (or reopens with new parameters) the connection on the worker thread.
  void open(const ConnectParams& params);
  void close();
  void setPingInterval(int ms);

  [[nodiscard]] State state() const { return m_state; }
  [[nodiscard]] const ServerInfo& info() const { return m_info; }
  [[nodiscard]] const ConnectFailure& failure() const { return m_failure; }
  [[nodiscard]] double lastRoundTripMs() const { return m_roundTripMs; }
  /// On a standby: how old its data is, whether it was promoted (ui/common/replicationstate.h).
  [[nodiscard]] const ReplicationState& replication() const { return m_replication; }
  /// The database's clock (docs/design.md §3: now() is the only clock), estimated from the local one.
  [[nodiscard]] QDateTime serverNow() const { return QDateTime::currentDateTimeUtc().addMSecs(m_info.clockOffsetMs); }

  /// Runs job on the worker thread; done runs on the GUI thread unless context is gone.
  /// Returns a ticket for cancel().
  template <class R>
  quint64 submit(QObject* context, std::function<R(pg::Connection&)> job, std::function<void(DbResult<R>)> done);

  /// Cancels the job's statement if it is running now (libpq cancel request).
  void cancel(quint64 ticket);

  /// Ended sessions whose worker thread has not finished yet: a session's destructor does not
  /// wait for its worker (a cancel is a network round trip, a job may be anywhere in libpq);
  /// the thread ends after the cancel and is deleted then. At exit the rest are waited for.
  [[nodiscard]] static int endingWorkers();

  // Called by the worker through queued invocations (GUI thread).
  void workerConnecting(bool reconnecting);
  void workerOpened(const ServerInfo& info, const ConnectFailure& warning);
  void workerFailed(const ConnectFailure& failure);
  void workerRoundTrip(double ms);
  void workerReplication(const ReplicationState& r);

 signals:
  void stateChanged(idem::ui::DbSession::State state);
  /// A connection was (re)established: views reload what they show.
  void opened();
  void roundTripMeasured(double ms);

 private:
  void post(quint64 ticket, DbWorker::Job job);
  template <class R>
  static DbResult<R> execute(pg::Connection* conn, const std::function<R(pg::Connection&)>& job);

  std::shared_ptr<SessionOutbox> m_outbox;
  QThread* m_thread;  // not owned once the session ends: it finishes and deletes itself
  DbWorker* m_worker;
  State m_state = State::Closed;
  ServerInfo m_info;
  ConnectFailure m_failure;
  double m_roundTripMs = -1;
  ReplicationState m_replication;
  std::atomic<quint64> m_nextTicket{0};
};

template <class R>
DbResult<R> DbSession::execute(pg::Connection* conn, const std::function<R(pg::Connection&)>& job) {
  DbResult<R> result;
  if (!conn) {
    result.error = {DbError::Kind::NotConnected, tr("Not connected to the database."), {}};
    return result;
  }
  try {
    result.value = job(*conn);
  } catch (const pg::Unavailable& e) {
    result.error = {DbError::Kind::Unavailable, QString::fromStdString(e.what()), {}};
  } catch (const pg::QueryError& e) {
    const QString state = QString::fromStdString(e.sqlstate());
    // 57014: query_canceled, by our own cancel request or statement_timeout.
    result.error = {state == QLatin1String("57014") ? DbError::Kind::Cancelled : DbError::Kind::Query,
                    QString::fromStdString(e.what()), state};
  } catch (const std::exception& e) {
    result.error = {DbError::Kind::Other, QString::fromStdString(e.what()), {}};
  }
  return result;
}

template <class R>
quint64 DbSession::submit(QObject* context, std::function<R(pg::Connection&)> job,
                          std::function<void(DbResult<R>)> done) {
  const quint64 ticket = ++m_nextTicket;
  // Captured by value: the worker thread sees only copies (value types across threads).
  // The answer goes through the outbox, which drops it if the session has ended, and the
  // context is checked on the GUI thread where it can be deleted.
  QPointer<QObject> guard(context);
  post(ticket, [out = m_outbox, job = std::move(job), done = std::move(done), guard](pg::Connection* conn) {
    auto result = std::make_shared<DbResult<R>>(execute<R>(conn, job));
    out->post([done, result, guard](DbSession&) {
      if (guard) done(std::move(*result));
    });
  });
  return ticket;
}

}  // namespace idem::ui
