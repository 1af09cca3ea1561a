#include "ui/common/dbworker.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QTimer>

#include <memory>

#include "core/store/migrations.h"
#include "core/store/policystore.h"
#include "ui/common/dbsession.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {
constexpr int kMaxRetryDelayMs = 15000;
// A read-only session runs each job in a transaction of its own that cannot write. Not a
// session setting (SET SESSION CHARACTERISTICS): behind a pooler in transaction mode that
// would stay on whichever server connection ran it — making the next client there, perhaps
// the enforcement service, unable to write — and be missing from the console's next
// transaction. One snapshot per job also keeps a job's queries consistent with each other.
constexpr const char* kReadOnlyBegin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
QString qs(const char* s) { return s ? QString::fromUtf8(s) : QString(); }
}  // namespace

DbWorker::DbWorker(DbSession* session)
    : m_session(session), m_pingTimer(new QTimer(this)), m_retryTimer(new QTimer(this)) {
  m_pingTimer->setInterval(5000);
  m_retryTimer->setSingleShot(true);
  connect(m_pingTimer, &QTimer::timeout, this, &DbWorker::ping);
  connect(m_retryTimer, &QTimer::timeout, this, &DbWorker::tryConnect);
}

DbWorker::~DbWorker() { close(); }

void DbWorker::open(const ConnectParams& params) {
  close();
  m_params = params;
  m_wantOpen = true;
  m_retryDelayMs = 1000;
  tryConnect();
}

void DbWorker::close() {
  m_wantOpen = false;
  m_pingTimer->stop();
  m_retryTimer->stop();
  {
    std::lock_guard lock(m_cancelMutex);
    m_cancel.reset();
  }
  m_conn.reset();
}

void DbWorker::setPingInterval(int ms) { m_pingTimer->setInterval(ms); }

void DbWorker::tryConnect() {
  if (!m_wantOpen) return;
  const bool reconnecting = m_retryTimer->property("lost").toBool();
  QMetaObject::invokeMethod(m_session, [s = m_session, reconnecting] { s->workerConnecting(reconnecting); },
                            Qt::QueuedConnection);
  std::string conninfo;
  try {
    conninfo = m_params.toLibpq();
  } catch (const std::invalid_argument& e) {
    fail(classifyConnectError(QString::fromUtf8(e.what()), ConnectParams::forDisplay(m_params.conninfo), false));
    return;
  }
  ServerInfo info;
  ConnectFailure warning;
  try {
    auto conn = std::make_unique<pg::Connection>(conninfo);
    info = inspect(*conn);
    warning = classifySchema(info.schemaVersion, info.expectedSchemaVersion, info.database);
    if (warning.isError()) {
      fail(warning);
      return;
    }
    {
      std::lock_guard lock(m_cancelMutex);
      m_cancel.reset(PQgetCancel(conn->raw()));
    }
    m_conn = std::move(conn);
  } catch (const pg::Unavailable& e) {
    QString message = QString::fromUtf8(e.what());
    message.remove(u"cannot connect to PostgreSQL: "_s);
    fail(classifyConnectError(message, ConnectParams::forDisplay(m_params.conninfo),
                              !m_params.password.isEmpty()));
    return;
  } catch (const pg::QueryError& e) {
    const QString detail = QString::fromUtf8(e.what());
    if (e.sqlstate() == "42501") {
      fail(permissionFailure(info.user, detail));
    } else {
      fail(ConnectFailure{ConnectFailure::Kind::Other, tr("Connected, but the store could not be read."),
                          tr("A query the console needs at start failed."),
                          tr("Read the server's message below; try again, or edit the profile."), detail});
    }
    return;
  }
  m_retryDelayMs = 1000;
  m_retryTimer->setProperty("lost", false);
  m_pingTimer->start();
  QMetaObject::invokeMethod(m_session, [s = m_session, info, warning] { s->workerOpened(info, warning); },
                            Qt::QueuedConnection);
  ping();
}

ServerInfo DbWorker::inspect(pg::Connection& conn) {
  ServerInfo info;
  PGconn* raw = conn.raw();
  info.host = qs(PQhost(raw));
  info.port = qs(PQport(raw));
  info.database = qs(PQdb(raw));
  info.user = qs(PQuser(raw));
  info.serverVersion = qs(PQparameterStatus(raw, "server_version"));
  info.tls = PQsslInUse(raw) == 1;
  if (info.tls) info.tlsProtocol = qs(PQsslAttribute(raw, "protocol"));
  {  // the sslmode in effect: the profile's, the console's default, PGSSLMODE or libpq's
    std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> options(PQconninfo(raw), &PQconninfoFree);
    for (PQconninfoOption* o = options.get(); o && o->keyword; ++o)
      if (qstrcmp(o->keyword, "sslmode") == 0) info.sslmode = qs(o->val);
  }
  // Read-only the way jobs run (see run()): the server, not the console, says it holds.
  if (m_params.readOnly) conn.exec(kReadOnlyBegin);
  const qint64 before = QDateTime::currentMSecsSinceEpoch();
  auto r = conn.exec(
      "SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') = 'on' AS ro, "
      "(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms");
  const qint64 after = QDateTime::currentMSecsSinceEpoch();
  if (m_params.readOnly) conn.exec("COMMIT");
  info.standby = r.boolean(0, "standby");
  info.readOnly = r.boolean(0, "ro") || info.standby;
  info.clockOffsetMs = r.integer(0, "now_ms") - (before + after) / 2;
  info.schemaVersion = store::appliedSchemaVersion(conn);
  info.expectedSchemaVersion = store::expectedSchemaVersion();
  if (info.schemaVersion > 0) {
    if (const auto p = store::policyDocumentInForce(conn)) {
      info.policyVersion = p->version;
      info.policyDocument = QString::fromStdString(p->document);
    }
  }
  return info;
}

void DbWorker::fail(const ConnectFailure& failure) {
  {
    std::lock_guard lock(m_cancelMutex);
    m_cancel.reset();
  }
  m_conn.reset();
  m_pingTimer->stop();
  QMetaObject::invokeMethod(m_session, [s = m_session, failure] { s->workerFailed(failure); }, Qt::QueuedConnection);
  if (failure.isTransient()) scheduleRetry();
}

void DbWorker::scheduleRetry() {
  if (!m_wantOpen) return;
  m_retryTimer->start(m_retryDelayMs);
  m_retryDelayMs = std::min(m_retryDelayMs * 2, kMaxRetryDelayMs);
}

void DbWorker::markLost(const QString& detail) {
  m_retryTimer->setProperty("lost", true);
  fail(lostFailure(detail));
}

void DbWorker::run(quint64 ticket, const Job& job) {
  {
    std::lock_guard lock(m_cancelMutex);
    m_runningTicket = ticket;
  }
  const bool wrap = m_conn && m_params.readOnly && PQtransactionStatus(m_conn->raw()) == PQTRANS_IDLE;
  try {
    if (wrap) m_conn->exec(kReadOnlyBegin);
  } catch (const pg::Unavailable&) {  // the job meets the same broken connection and reports it
  } catch (const pg::QueryError&) {
  }
  job(m_conn.get());
  if (wrap) endJobTransaction();
  {
    std::lock_guard lock(m_cancelMutex);
    m_runningTicket = 0;
  }
  if (m_conn && !m_conn->healthy()) markLost(tr("The server closed the connection."));
}

void DbWorker::endJobTransaction() {
  if (!m_conn || !m_conn->healthy()) return;
  const auto status = PQtransactionStatus(m_conn->raw());
  if (status != PQTRANS_INTRANS && status != PQTRANS_INERROR) return;  // the job ended it itself
  try {
    m_conn->exec(status == PQTRANS_INTRANS ? "COMMIT" : "ROLLBACK");
  } catch (const pg::Unavailable&) {  // noticed below as a lost connection
  } catch (const pg::QueryError&) {
  }
}

void DbWorker::cancel(quint64 ticket) {
  std::lock_guard lock(m_cancelMutex);
  if (!m_cancel || m_runningTicket == 0 || (ticket != 0 && m_runningTicket != ticket)) return;
  char err[256];
  PQcancel(m_cancel.get(), err, sizeof err);
}

void DbWorker::ping() {
  if (!m_conn) return;
  QElapsedTimer t;
  t.start();
  try {
    m_conn->exec("SELECT 1");
  } catch (const pg::Unavailable& e) {
    markLost(QString::fromUtf8(e.what()));
    return;
  } catch (const pg::QueryError&) {  // e.g. a standby conflict: the next ping tells
    return;
  }
  const double ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
  QMetaObject::invokeMethod(m_session, [s = m_session, ms] { s->workerRoundTrip(ms); }, Qt::QueuedConnection);
}

}  // namespace idem::ui
