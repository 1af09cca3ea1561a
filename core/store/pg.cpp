#include "core/store/pg.h"

#include "core/store/pgwire.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>

namespace idem::pg {
namespace wire {

bool isConnectionLoss(PGconn* conn, const PGresult* r) {
  if (PQstatus(conn) != CONNECTION_OK) return true;
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  // Class 08: connection exception; 57P01..57P03: admin shutdown, crash shutdown, cannot connect now.
  return state && (std::string_view(state).starts_with("08") || std::string_view(state).starts_with("57P"));
}

ParamArrays::ParamArrays(const std::vector<Param>& params) {
  values.reserve(params.size());
  for (const auto& p : params) {
    values.push_back(p.value ? p.value->data() : nullptr);
    lengths.push_back(p.value ? static_cast<int>(p.value->size()) : 0);
    bytes += p.value ? p.value->size() : 0;
    formats.push_back(p.binary ? 1 : 0);
  }
}

std::string trimmed(const char* message) {
  std::string s = message ? message : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace wire

using namespace wire;

namespace {

// Reads every result still pending after a sent script or COPY, so the connection is free
// again; returns the first error (not cleared: check() reports and frees it), or nullptr.
PGresult* readRemainingResults(PGconn* conn) {
  PGresult* firstError = nullptr;
  while (PGresult* r = PQgetResult(conn)) {
    if (PQresultStatus(r) == PGRES_FATAL_ERROR && !firstError) {
      firstError = r;
      continue;
    }
    PQclear(r);
  }
  return firstError;
}
}  // namespace

bool QueryError::isTransientSqlstate(std::string_view state) {
  if (state.size() != 5) return false;
  const std::string_view cls = state.substr(0, 2);
  return cls == "25" || cls == "40" || cls == "53" || cls == "57" || cls == "58" || state == "55P03" ||
         cls == "08";
}

Param::Param(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  value = std::string(buf, ec == std::errc{} ? end : buf);
}

namespace {
std::string typeName(Oid oid) {
  switch (oid) {
    case 16: return "boolean";
    case 17: return "bytea";
    case 20: return "bigint";
    case 23: return "integer";
    case 25: return "text";
    case 114: return "json";
    case 1184: return "timestamptz";
    case 1114: return "timestamp";
    case 2950: return "uuid";
    case 3802: return "jsonb";
    default: return "type " + std::to_string(oid);
  }
}
}  // namespace

int Result::column(const char* name) const {
  // By exact name: the callers' names are lower-case identifiers, so no PQfnumber (which copies
  // and folds the name on every call).
  const int n = PQnfields(m_res.get());
  for (int c = 0; c < n; ++c)
    if (std::strcmp(PQfname(m_res.get(), c), name) == 0) return c;
  throw QueryError(std::string("the store's result has no column \"") + name +
                       "\": its schema is not the one this program was built for (run `idemctl migrate`, or use "
                       "a matching version)",
                   "42703");
}

int Result::column(const char* name, Type type) const {
  const int c = column(name);
  const Oid found = PQftype(m_res.get(), c);
  if (found != static_cast<Oid>(type))
    throw QueryError(std::string("the store's column \"") + name + "\" is " + typeName(found) + ", expected " +
                         typeName(static_cast<Oid>(type)) +
                         ": its schema is not the one this program was built for",
                     "42804");
  return c;
}

std::optional<std::string> Result::optStr(int row, const char* name) const {
  int c = column(name);
  if (isNull(row, c)) return std::nullopt;
  return std::string(text(row, c));
}

long long Result::integer(int row, const char* name) const {
  auto t = text(row, column(name));
  long long v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

double Result::real(int row, const char* name) const {
  auto t = text(row, column(name));
  double v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

std::string Result::bytes(int row, const char* name) const {
  int c = column(name);
  if (isNull(row, c)) return {};
  return decodeByteaHex(text(row, c));
}

long long Result::affected() const {
  const char* n = PQcmdTuples(m_res.get());
  return (n && *n) ? std::atoll(n) : 0;
}

namespace {
unsigned long long bigEndian(std::string_view v) {
  unsigned long long out = 0;
  for (char c : v) out = (out << 8) | static_cast<unsigned char>(c);
  return out;
}
}  // namespace

int Result::binInt32(int row, const char* name) const { return binInt32At(row, column(name)); }

int Result::binInt32At(int row, int col) const {
  return static_cast<int>(static_cast<std::uint32_t>(bigEndian(text(row, col))));
}

bool Result::binBoolAt(int row, int col) const {
  const auto v = text(row, col);
  if (v.size() != 1) throw QueryError("a boolean of " + std::to_string(v.size()) + " bytes: not a boolean column", "42804");
  return v[0] != 0;
}

long long Result::binInt64(int row, const char* name) const { return binInt64At(row, column(name)); }

long long Result::binInt64At(int row, int col) const { return static_cast<long long>(bigEndian(text(row, col))); }

long long Result::binTimestampMs(int row, const char* name) const { return binTimestampMsAt(row, column(name)); }

long long Result::binTimestampMsAt(int row, int col) const {
  // Microseconds since 2000-01-01 00:00:00 UTC; 946684800000 ms separate it from 1970.
  const auto us = static_cast<long long>(bigEndian(text(row, col)));
  return (us >= 0 ? us / 1000 : (us - 999) / 1000) + 946684800000LL;
}

std::string Result::binUuid(int row, const char* name) const { return binUuidAt(row, column(name)); }

std::string Result::binUuidAt(int row, int col) const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  auto raw = text(row, col);
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    const auto b = static_cast<unsigned char>(raw[i]);
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::string_view Result::binJsonb(int row, const char* name) const { return binJsonbAt(row, column(name)); }

std::string_view Result::binJsonbAt(int row, int col) const {
  auto raw = text(row, col);
  return raw.empty() ? raw : raw.substr(1);
}

Connection::Connection(const std::string& conninfo) : m_conn(PQconnectdb(conninfo.c_str()), &PQfinish) {
  if (!m_conn) throw Unavailable("out of memory creating a PostgreSQL connection");
  if (PQstatus(m_conn.get()) != CONNECTION_OK)
    throw Unavailable("cannot connect to PostgreSQL: " + trimmed(PQerrorMessage(m_conn.get())));
  // Quiet NOTICEs (e.g. from idempotent migrations) instead of printing them to stderr.
  PQsetNoticeProcessor(m_conn.get(), [](void*, const char*) {}, nullptr);
}

Connection::Connection(PGconn* connected, Adopt) : m_conn(connected, &PQfinish) {
  PQsetNoticeProcessor(m_conn.get(), [](void*, const char*) {}, nullptr);
}

void Connection::noteTransfer(std::size_t bytes) {
  if (bytes > kRetireAfterBytes) m_retire = true;
}

Result Connection::check(PGresult* raw) {
  Result r(raw);
  if (raw) noteTransfer(PQresultMemorySize(raw));
  auto status = raw ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_PIPELINE_SYNC) return r;
  std::string message = raw ? trimmed(PQresultErrorMessage(raw)) : trimmed(PQerrorMessage(m_conn.get()));
  if (isConnectionLoss(m_conn.get(), raw)) {
    m_prepared.clear();
    throw Unavailable("lost the PostgreSQL connection: " + message);
  }
  const char* state = PQresultErrorField(raw, PG_DIAG_SQLSTATE);
  throw QueryError(message, state ? state : "");
}

Result Connection::exec(std::string_view sql, const std::vector<Param>& params) {
  return execUnnamed(sql, params, false);
}

Result Connection::execUnnamed(std::string_view sql, const std::vector<Param>& params, bool binaryResults) {
  ParamArrays a(params);
  noteTransfer(a.bytes);
  std::string text(sql);
  return check(PQexecParams(m_conn.get(), text.c_str(), static_cast<int>(params.size()), nullptr, a.values.data(),
                            a.lengths.data(), a.formats.data(), binaryResults ? 1 : 0));
}

namespace wire {

// 26000: the statement is not prepared on this server connection; 42P05: one of that name is.
bool poolerMovedSession(const PGresult* r) {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  return state && (std::string_view(state) == "26000" || std::string_view(state) == "42P05");
}

std::string serverStatementName(const std::string& name, std::string_view sql) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a 64
  for (char c : sql) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return name + "_" + hex;
}

}  // namespace wire

void Connection::setPreparedStatements(bool on) {
  m_usePrepared = on;
  if (!on) m_prepared.clear();
}

Result Connection::afterPoolerMovedSession(PGresult* failed, std::string_view sql, const std::vector<Param>& params,
                                           bool binaryResults) {
  setPreparedStatements(false);
  // In a transaction block the error has already aborted the caller's transaction: report it.
  if (transactionState() != TxState::Idle) return check(failed);
  PQclear(failed);
  return execUnnamed(sql, params, binaryResults);
}

Result Connection::execPrepared(const std::string& name, std::string_view sql, const std::vector<Param>& params,
                                bool binaryResults) {
  if (!m_usePrepared) return execUnnamed(sql, params, binaryResults);
  auto known = std::find_if(m_prepared.begin(), m_prepared.end(), [&](const Prepared& p) { return p.name == name; });
  if (known == m_prepared.end()) {
    Prepared p{name, serverStatementName(name, sql)};
    std::string text(sql);
    PGresult* r = PQprepare(m_conn.get(), p.serverName.c_str(), text.c_str(), 0, nullptr);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && poolerMovedSession(r))
      return afterPoolerMovedSession(r, sql, params, binaryResults);
    check(r);
    m_prepared.push_back(std::move(p));
    known = std::prev(m_prepared.end());
  }
  ParamArrays a(params);
  noteTransfer(a.bytes);
  PGresult* r = PQexecPrepared(m_conn.get(), known->serverName.c_str(), static_cast<int>(params.size()),
                               a.values.data(), a.lengths.data(), a.formats.data(), binaryResults ? 1 : 0);
  const auto status = PQresultStatus(r);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK && poolerMovedSession(r))
    return afterPoolerMovedSession(r, sql, params, binaryResults);
  return check(r);
}

std::vector<Result> Connection::pipeline(const std::vector<std::pair<std::string, std::vector<Param>>>& statements) {
  try {
    return pipelineOnce(statements);
  } catch (const QueryError& e) {
    // A pooler moved the session: the statements prepared here are unknown there. A pipeline is
    // one transaction (implicit, or BEGIN … COMMIT), so nothing of it committed: run it unnamed.
    if (!m_usePrepared || (e.sqlstate() != "26000" && e.sqlstate() != "42P05")) throw;
    setPreparedStatements(false);
    return pipelineOnce(statements);
  }
}

std::vector<Result> Connection::pipelineOnce(const std::vector<std::pair<std::string, std::vector<Param>>>& statements) {
  PGconn* c = m_conn.get();
  if (PQenterPipelineMode(c) != 1) throw Unavailable("cannot enter pipeline mode: " + trimmed(PQerrorMessage(c)));
  struct Exit {
    PGconn* c;
    ~Exit() { PQexitPipelineMode(c); }
  } exitGuard{c};
  // Statements with parameters run prepared, like execPrepared's (parsed and planned once per
  // connection); a statement not yet prepared here is prepared in the same pipeline, and counts as
  // prepared once its PREPARE's result comes back.
  std::vector<std::optional<Prepared>> preparing;  // per result to read: the PREPARE it answers
  for (const auto& [sql, params] : statements) {
    ParamArrays a(params);
    noteTransfer(a.bytes);
    const Prepared* known = nullptr;
    if (m_usePrepared && !params.empty()) {
      const std::string name = serverStatementName("idem_pipe", sql);
      const auto named = [&](const Prepared& p) { return p.name == name; };
      auto it = std::find_if(m_prepared.begin(), m_prepared.end(), named);
      // The same statement twice in one pipeline: prepared by the first.
      auto pending = std::find_if(preparing.begin(), preparing.end(),
                                  [&](const std::optional<Prepared>& p) { return p && named(*p); });
      if (pending != preparing.end()) {
        known = &**pending;
      } else if (it == m_prepared.end()) {
        Prepared p{name, serverStatementName(name, sql)};
        if (PQsendPrepare(c, p.serverName.c_str(), sql.c_str(), 0, nullptr) != 1)
          throw Unavailable("cannot send pipelined statement: " + trimmed(PQerrorMessage(c)));
        preparing.emplace_back(std::move(p));
        known = &*preparing.back();
      } else {
        known = &*it;
      }
    }
    const int sent = known ? PQsendQueryPrepared(c, known->serverName.c_str(), static_cast<int>(params.size()),
                                                 a.values.data(), a.lengths.data(), a.formats.data(), 0)
                           : PQsendQueryParams(c, sql.c_str(), static_cast<int>(params.size()), nullptr,
                                               a.values.data(), a.lengths.data(), a.formats.data(), 0);
    if (sent != 1) throw Unavailable("cannot send pipelined statement: " + trimmed(PQerrorMessage(c)));
    preparing.emplace_back(std::nullopt);
  }
  if (PQpipelineSync(c) != 1) throw Unavailable("cannot sync pipeline: " + trimmed(PQerrorMessage(c)));
  std::vector<Result> results;
  std::optional<std::string> firstError;
  std::string firstState;
  bool lost = false;
  std::size_t answered = 0;  // results read so far, PREPAREs included
  // Each command yields its result then a NULL; the sync point yields PGRES_PIPELINE_SYNC.
  for (;;) {
    PGresult* r = PQgetResult(c);
    if (!r) {
      if (PQstatus(c) != CONNECTION_OK) {
        lost = true;
        break;
      }
      continue;
    }
    auto st = PQresultStatus(r);
    if (st == PGRES_PIPELINE_SYNC) {
      PQclear(r);
      break;
    }
    const bool isPrepare = answered < preparing.size() && preparing[answered].has_value();
    if (isPrepare && st == PGRES_COMMAND_OK) m_prepared.push_back(*preparing[answered]);
    ++answered;
    if (st == PGRES_FATAL_ERROR || st == PGRES_PIPELINE_ABORTED) {
      if (!firstError && st == PGRES_FATAL_ERROR) {
        firstError = trimmed(PQresultErrorMessage(r));
        const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        firstState = s ? s : "";
        lost = isConnectionLoss(c, r);
      }
      PQclear(r);
      continue;
    }
    if (isPrepare) {
      PQclear(r);
      continue;
    }
    noteTransfer(PQresultMemorySize(r));
    results.emplace_back(r);
  }
  if (lost) {
    m_prepared.clear();
    throw Unavailable("lost the PostgreSQL connection: " + firstError.value_or(trimmed(PQerrorMessage(c))));
  }
  if (firstError) throw QueryError(*firstError, firstState);
  return results;
}

void Connection::script(std::string_view sql) {
  std::string text(sql);
  if (PQsendQuery(m_conn.get(), text.c_str()) != 1)
    throw Unavailable("cannot send script: " + trimmed(PQerrorMessage(m_conn.get())));
  if (PGresult* firstError = readRemainingResults(m_conn.get())) check(firstError);
}

void Connection::copyIn(std::string_view copySql, std::string_view data) {
  std::string sql(copySql);
  PGresult* start = PQexec(m_conn.get(), sql.c_str());
  if (!start || PQresultStatus(start) != PGRES_COPY_IN) {
    check(start);
    throw QueryError("COPY did not start", "");
  }
  PQclear(start);
  noteTransfer(data.size());
  const bool sent = PQputCopyData(m_conn.get(), data.data(), static_cast<int>(data.size())) == 1;
  if (PQputCopyEnd(m_conn.get(), sent ? nullptr : "client failed to send COPY data") != 1 || !sent) {
    m_prepared.clear();
    throw Unavailable("lost the PostgreSQL connection during COPY: " + trimmed(PQerrorMessage(m_conn.get())));
  }
  if (PGresult* firstError = readRemainingResults(m_conn.get())) check(firstError);
  if (PQstatus(m_conn.get()) != CONNECTION_OK) throw Unavailable("lost the PostgreSQL connection during COPY");
}

void appendCopyField(std::string& line, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\': line += "\\\\"; break;
      case '\t': line += "\\t"; break;
      case '\n': line += "\\n"; break;
      case '\r': line += "\\r"; break;
      default: line += c;
    }
  }
}

TxState Connection::transactionState() const {
  switch (PQtransactionStatus(m_conn.get())) {
    case PQTRANS_IDLE: return TxState::Idle;
    case PQTRANS_INTRANS: return TxState::InTransaction;
    case PQTRANS_INERROR: return TxState::Failed;
    default: return TxState::Unknown;
  }
}

bool CancelHandle::send() const {
  if (!m_cancel) return false;
  char err[256];
  return PQcancel(m_cancel.get(), err, sizeof err) == 1;
}

std::string quoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char ch : name) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + '"';
}

std::string decodeByteaHex(std::string_view text) {
  if (!text.starts_with("\\x")) return std::string(text);
  auto nibble = [](char ch) -> int {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return 0;
  };
  std::string out;
  out.reserve((text.size() - 2) / 2);
  for (std::size_t i = 2; i + 1 < text.size(); i += 2)
    out.push_back(static_cast<char>(nibble(text[i]) * 16 + nibble(text[i + 1])));
  return out;
}

std::string arrayLiteral(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char ch : items[i]) {
      if (ch == '"' || ch == '\\') out += '\\';
      out += ch;
    }
    out += '"';
  }
  return out + "}";
}

}  // namespace idem::pg
