#include "core/store/asyncconnection.h"

#include <boost/asio/post.hpp>
#include <algorithm>

#include "core/store/pgwire.h"

namespace idem::pg {

using namespace wire;
namespace asio = boost::asio;

AsyncConnection::AsyncConnection(const asio::any_io_executor& executor) : m_socket(executor) {}

AsyncConnection::~AsyncConnection() {
  // libpq owns the descriptor: asio lets go of it, PQfinish closes it.
  if (m_socket.is_open()) m_socket.release();
}

std::shared_ptr<AsyncConnection> AsyncConnection::open(const asio::any_io_executor& executor,
                                                       const std::string& conninfo, Opened opened) {
  std::shared_ptr<AsyncConnection> self(new AsyncConnection(executor));
  self->m_opened = std::move(opened);
  PGconn* raw = PQconnectStart(conninfo.c_str());
  if (raw == nullptr) {
    asio::post(executor, [self] { self->openFailed("out of memory creating a PostgreSQL connection"); });
    return self;
  }
  self->m_conn.reset(new Connection(raw, Connection::Adopt{}));
  // libpq: right after PQconnectStart, behave as if PQconnectPoll had asked to write.
  asio::post(executor, [self] { self->pollConnect(PGRES_POLLING_WRITING); });
  return self;
}

bool AsyncConnection::healthy() const {
  return !m_closed && m_conn && PQstatus(m_conn->raw()) == CONNECTION_OK;
}

void AsyncConnection::watchSocket() {
  // libpq may open another socket while it connects (the next host or address): watch the one
  // it uses now. Registered anew each time, so a closed socket's number reused is not missed.
  if (m_socket.is_open()) m_socket.release();
  const int fd = PQsocket(m_conn->raw());
  if (fd >= 0) m_socket.assign(fd);
}

void AsyncConnection::pollConnect(int lastPoll) {
  if (m_closed) return;
  PGconn* c = m_conn->raw();
  if (PQstatus(c) == CONNECTION_BAD || lastPoll == PGRES_POLLING_FAILED)
    return openFailed("cannot connect to PostgreSQL: " + trimmed(PQerrorMessage(c)));
  if (lastPoll == PGRES_POLLING_OK) {
    if (PQsetnonblocking(c, 1) != 0)
      return openFailed("cannot make the PostgreSQL connection non-blocking: " + trimmed(PQerrorMessage(c)));
    auto opened = std::move(m_opened);
    m_opened = nullptr;
    opened(shared_from_this(), nullptr);
    return;
  }
  watchSocket();
  const auto wait = lastPoll == PGRES_POLLING_READING ? asio::posix::stream_descriptor::wait_read
                                                      : asio::posix::stream_descriptor::wait_write;
  m_socket.async_wait(wait, [self = shared_from_this()](const boost::system::error_code& ec) {
    if (self->m_closed) return;
    if (ec) return self->openFailed("cannot connect to PostgreSQL: " + ec.message());
    self->pollConnect(PQconnectPoll(self->m_conn->raw()));
  });
}

void AsyncConnection::execPrepared(const std::string& name, std::string_view sql, std::vector<Param> params,
                                   bool binaryResults, Done done) {
  m_done = std::move(done);
  if (!healthy()) {
    lost("the connection is closed");
    return;
  }
  m_name = name;
  m_sql = std::string(sql);
  m_params = std::move(params);
  m_binary = binaryResults;
  if (!m_conn->m_usePrepared) return sendUnnamed();
  const bool known = std::any_of(m_conn->m_prepared.begin(), m_conn->m_prepared.end(),
                                 [&](const Connection::Prepared& p) { return p.name == name; });
  if (known) sendPrepared();
  else sendPrepare();
}

void AsyncConnection::sendPrepare() {
  m_phase = Phase::Preparing;
  const std::string server = serverStatementName(m_name, m_sql);
  if (PQsendPrepare(m_conn->raw(), server.c_str(), m_sql.c_str(), 0, nullptr) != 1)
    return lost("cannot send a statement");
  flushThenRead();
}

void AsyncConnection::sendPrepared() {
  m_phase = Phase::Executing;
  const auto known = std::find_if(m_conn->m_prepared.begin(), m_conn->m_prepared.end(),
                                  [&](const Connection::Prepared& p) { return p.name == m_name; });
  ParamArrays a(m_params);
  m_conn->noteTransfer(a.bytes);
  if (PQsendQueryPrepared(m_conn->raw(), known->serverName.c_str(), static_cast<int>(m_params.size()),
                          a.values.data(), a.lengths.data(), a.formats.data(), m_binary ? 1 : 0) != 1)
    return lost("cannot send a statement");
  flushThenRead();
}

void AsyncConnection::sendUnnamed() {
  m_phase = Phase::ExecutingUnnamed;
  ParamArrays a(m_params);
  m_conn->noteTransfer(a.bytes);
  if (PQsendQueryParams(m_conn->raw(), m_sql.c_str(), static_cast<int>(m_params.size()), nullptr, a.values.data(),
                        a.lengths.data(), a.formats.data(), m_binary ? 1 : 0) != 1)
    return lost("cannot send a statement");
  flushThenRead();
}

void AsyncConnection::flushThenRead() {
  const int flushed = PQflush(m_conn->raw());
  if (flushed < 0) return lost("cannot send a statement");
  if (flushed == 0) return waitToRead();
  // The socket's buffer is full (a large statement): write the rest once it drains.
  m_socket.async_wait(asio::posix::stream_descriptor::wait_write,
                      [self = shared_from_this()](const boost::system::error_code& ec) {
                        if (self->m_closed) return;
                        if (ec) return self->lost(ec.message());
                        self->flushThenRead();
                      });
}

void AsyncConnection::waitToRead() {
  // asio re-arms the descriptor when a wait starts, so input that arrived before it is not missed.
  m_socket.async_wait(asio::posix::stream_descriptor::wait_read,
                      [self = shared_from_this()](const boost::system::error_code& ec) {
                        if (self->m_closed) return;
                        if (ec) return self->lost(ec.message());
                        self->readResults();
                      });
}

void AsyncConnection::readResults() {
  PGconn* c = m_conn->raw();
  if (PQconsumeInput(c) != 1) return lost(trimmed(PQerrorMessage(c)));
  while (PQisBusy(c) == 0) {
    PGresult* r = PQgetResult(c);
    if (r == nullptr) return commandDone();
    if (m_first) PQclear(r);  // a command has one result; keep the first (its error, if any)
    else m_first.reset(r);
  }
  waitToRead();
}

AsyncConnection::Outcome AsyncConnection::outcomeOf(PGresult* raw) {
  if (raw != nullptr) m_conn->noteTransfer(PQresultMemorySize(raw));
  try {
    return {m_conn->check(raw), nullptr};
  } catch (...) {
    return {std::nullopt, std::current_exception()};
  }
}

void AsyncConnection::commandDone() {
  PGresult* raw = m_first.release();
  const bool failed = raw == nullptr || (PQresultStatus(raw) != PGRES_COMMAND_OK && PQresultStatus(raw) != PGRES_TUPLES_OK);
  // A pooler in transaction mode gave this statement another server connection, where it is not
  // prepared (or prepared already): outside a transaction nothing ran, so it goes again unnamed,
  // and this connection sends unnamed statements from then on (as Connection does).
  if (failed && m_phase != Phase::ExecutingUnnamed && poolerMovedSession(raw) &&
      PQtransactionStatus(m_conn->raw()) == PQTRANS_IDLE) {
    PQclear(raw);
    m_conn->setPreparedStatements(false);
    return sendUnnamed();
  }
  if (m_phase == Phase::Preparing && !failed) {
    PQclear(raw);
    m_conn->m_prepared.push_back({m_name, serverStatementName(m_name, m_sql)});
    return sendPrepared();
  }
  finish(outcomeOf(raw));
}

void AsyncConnection::finish(Outcome outcome) {
  m_phase = Phase::Idle;
  m_params.clear();
  auto done = std::move(m_done);
  m_done = nullptr;
  if (done) done(std::move(outcome));
}

void AsyncConnection::openFailed(const std::string& why) {
  m_closed = true;
  if (m_socket.is_open()) m_socket.release();
  auto opened = std::move(m_opened);
  m_opened = nullptr;
  if (opened) opened(shared_from_this(), std::make_exception_ptr(Unavailable(why)));
}

void AsyncConnection::lost(const std::string& what) {
  m_closed = true;
  if (m_socket.is_open()) m_socket.release();
  if (m_conn) m_conn->m_prepared.clear();
  finish({std::nullopt, std::make_exception_ptr(Unavailable("lost the PostgreSQL connection: " + what))});
}

void AsyncConnection::close() {
  if (m_closed) return;
  m_closed = true;
  if (m_socket.is_open()) {
    m_socket.cancel();
    m_socket.release();
  }
  if (m_opened) {
    auto opened = std::move(m_opened);
    m_opened = nullptr;
    opened(shared_from_this(), std::make_exception_ptr(Unavailable("the connection was closed before it was ready")));
  }
  if (m_done) finish({std::nullopt, std::make_exception_ptr(Unavailable("the connection was closed"))});
  m_conn.reset();
}

}  // namespace idem::pg
