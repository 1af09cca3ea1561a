#pragma once
// The object that owns one libpq connection and lives on its own QThread: a libpq connection
// is not thread-safe, so only the thread that opened it uses it, and only values cross threads.
// It runs jobs in order, pings the server for the status bar, and reconnects by itself after a loss.
#include <QObject>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "core/store/pg.h"
#include "core/store/transaction.h"
#include "ui/common/connectfailure.h"
#include "ui/common/connectparams.h"
#include "ui/common/serverinfo.h"

class QTimer;

namespace idem::ui {

class DbSession;

/// The worker's way back to its session on the GUI thread. A session that ends closes it
/// first: its worker may finish a job after the session is gone (the session does not wait
/// for it), and must then post nothing to a deleted object.
class SessionOutbox {
 public:
  explicit SessionOutbox(DbSession* session) : m_session(session) {}
  /// Queues fn to run on the GUI thread with the session, unless the session has ended.
  void post(std::function<void(DbSession&)> fn);
  /// Called by the session's destructor (GUI thread); no post reaches it afterwards.
  void close();

 private:
  std::mutex m_mutex;
  DbSession* m_session;
};

class DbWorker final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(DbWorker)

 public:
  /// A job gets the open connection, or nullptr while disconnected.
  using Job = std::function<void(pg::Connection*)>;

  explicit DbWorker(std::shared_ptr<SessionOutbox> outbox);
  ~DbWorker() override;

  // Called on the worker thread (the session queues them with invokeMethod).
  void open(const ConnectParams& params);
  void close();
  void run(quint64 ticket, const Job& job);
  void setPingInterval(int ms);

  /// Cancels the statement running now if it belongs to ticket (0: whatever runs). Any
  /// thread; the cancel
  /// request is a short network call, so the session issues it from a pool thread.
  void cancel(quint64 ticket);

 private:
  void tryConnect();
  void scheduleRetry();
  void ping();
  void markLost(const QString& detail);
  void fail(const ConnectFailure& failure);
  /// Commits the read-only transaction a job ran in (after an error, its end rolls it back).
  void endJobTransaction(pg::Transaction& tx);
  ServerInfo inspect(pg::Connection& conn);

  std::shared_ptr<SessionOutbox> m_outbox;
  ConnectParams m_params;
  std::unique_ptr<pg::Connection> m_conn;
  QTimer* m_pingTimer;
  QTimer* m_retryTimer;
  int m_retryDelayMs = 1000;
  bool m_wantOpen = false;

  std::mutex m_cancelMutex;  // guards the two members below against cancel() from other threads
  std::optional<pg::CancelHandle> m_cancel;
  quint64 m_runningTicket = 0;
};

}  // namespace idem::ui
