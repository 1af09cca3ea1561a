#include "ui/common/dbworker.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QTimer>

#include <memory>

#include "core/store/migrations.h"
#include "core/store/policystore.h"
#include "core/store/serviceregistry.h"
#include "ui/common/dbsession.h"
#include "ui/common/replicationstate.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {
constexpr int kMaxRetryDelayMs = 15000;
// A read-only session runs each job in a transaction of its own that cannot write. Not a
// session setting (SET SESSION CHARACTERISTICS): behind a pooler in transaction mode that
// would stay on whichever server connection ran it — making the next client there, perhaps
// the enforcement service, unable to write — and be missing from the console's next
// transaction. One snapshot per job also keeps a job's queries consistent with each other.
constexpr auto kReadOnly = pg::Transaction::Mode::ReadOnlySnapshot;
QString qs(const char* s) { return s ? QString::fromUtf8(s) : QString(); }
}  // namespace

void SessionOutbox::post(std::function<void(DbSession&)> fn) {
  std::lock_guard lock(m_mutex);
  if (!m_session) return;
  // The event is dropped with the session if it ends before delivery (QObject's destructor
  // discards events posted to it); close() under the same mutex stops new ones.
  QMetaObject::invokeMethod(m_session, [s = m_session, fn = std::move(fn)] { fn(*s); }, Qt::QueuedConnection);
}

void SessionOutbox::close() {
  std::lock_guard lock(m_mutex);
  m_session = nullptr;
}

DbWorker::DbWorker(std::shared_ptr<SessionOutbox> outbox)
    : m_outbox(std::move(outbox)), m_pingTimer(new QTimer(this)), m_retryTimer(new QTimer(this)) {
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
  m_outbox->post([reconnecting](DbSession& s) { s.workerConnecting(reconnecting); });
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
      m_cancel.emplace(*conn);
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
  m_outbox->post([info, warning](DbSession& s) { s.workerOpened(info, warning); });
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
  std::optional<pg::Transaction> tx;
  if (m_params.readOnly) tx.emplace(conn, kReadOnly);
  const qint64 before = QDateTime::currentMSecsSinceEpoch();
  auto r = conn.exec(
      "SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') = 'on' AS ro, "
      "(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms");
  const qint64 after = QDateTime::currentMSecsSinceEpoch();
  if (tx) tx->commit();
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
    if (info.schemaVersion >= 25)
      for (const auto& s : store::knownServices(conn)) info.services << QString::fromStdString(s.name);
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
  m_outbox->post([failure](DbSession& s) { s.workerFailed(failure); });
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
  std::optional<pg::Transaction> tx;
  try {
    if (m_conn && m_params.readOnly && m_conn->transactionState() == pg::TxState::Idle)
      tx.emplace(*m_conn, kReadOnly);
  } catch (const pg::Error&) {  // the job meets the same broken connection and reports it
  }
  job(m_conn.get());
  if (tx) endJobTransaction(*tx);
  tx.reset();
  {
    std::lock_guard lock(m_cancelMutex);
    m_runningTicket = 0;
  }
  if (m_conn && !m_conn->healthy()) markLost(tr("The server closed the connection."));
}

void DbWorker::endJobTransaction(pg::Transaction& tx) {
  // A failed transaction (or one the job ended itself) is left to tx's end, which rolls back
  // only what is still open.
  if (!m_conn || m_conn->transactionState() != pg::TxState::InTransaction) return;
  try {
    tx.commit();
  } catch (const pg::Error&) {  // a lost connection is noticed by run()
  }
}

void DbWorker::cancel(quint64 ticket) {
  std::lock_guard lock(m_cancelMutex);
  if (!m_cancel || m_runningTicket == 0 || (ticket != 0 && m_runningTicket != ticket)) return;
  m_cancel->send();
}

void DbWorker::ping() {
  if (!m_conn) return;
  QElapsedTimer t;
  t.start();
  try {
    // On a hot standby the ping also reads how old its data is, and notices a promotion.
    auto r = m_conn->exec(kReplicationPingSql);
    ReplicationState rep;
    rep.known = true;
    rep.standby = r.boolean(0, "standby");
    rep.dataAgeS = r.real(0, "data_age_s");
    rep.standbys = static_cast<int>(r.integer(0, "standbys"));
    rep.syncStandbys = static_cast<int>(r.integer(0, "sync_standbys"));
    m_outbox->post([rep](DbSession& s) { s.workerReplication(rep); });
  } catch (const pg::Unavailable& e) {
    markLost(QString::fromUtf8(e.what()));
    return;
  } catch (const pg::QueryError&) {  // e.g. a standby conflict: the next ping tells
    return;
  }
  const double ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
  m_outbox->post([ms](DbSession& s) { s.workerRoundTrip(ms); });
}

}  // namespace idem::ui
