#pragma once
// Thin RAII layer over libpq: one owner per handle, bound parameters only.
#include <libpq-fe.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace idem::pg {

/// Any failure of the store: one of the two below.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The server could not be reached or the connection broke: callers answer 503 and retry later.
class Unavailable : public Error {
 public:
  using Error::Error;
};

/// The server answered with an error (bad SQL, constraint, permission, read-only, timeout...).
/// sqlstate is the five-character SQLSTATE code.
class QueryError : public Error {
 public:
  QueryError(const std::string& message, std::string sqlstate) : Error(message), m_sqlstate(std::move(sqlstate)) {}
  [[nodiscard]] const std::string& sqlstate() const { return m_sqlstate; }
  /// The store refused for now, not the statement for good: a read-only server after a
  /// failover (25006), a serialization failure or deadlock (40xxx), out of resources (53xxx),
  /// a lock not available (55P03), a statement timeout or cancel (57014), an I/O error (58xxx).
  /// The same statement may succeed later; nothing it did committed.
  [[nodiscard]] bool transient() const { return isTransientSqlstate(m_sqlstate); }
  [[nodiscard]] static bool isTransientSqlstate(std::string_view state);

 private:
  std::string m_sqlstate;
};

/// A PostgreSQL array literal for one bound parameter (cast it, e.g. `$1::text[]`): every
/// element quoted and escaped, so values with commas, braces or quotes pass through as they are.
[[nodiscard]] std::string arrayLiteral(const std::vector<std::string>& items);

/// A statement parameter: text, binary (bytea) or NULL.
struct Param {
  std::optional<std::string> value;
  bool binary = false;

  Param() = default;  // NULL
  Param(std::string v) : value(std::move(v)) {}                    // NOLINT: implicit on purpose
  Param(std::string_view v) : value(std::string(v)) {}             // NOLINT
  Param(const char* v) : value(std::string(v)) {}                  // NOLINT
  Param(long long v) : value(std::to_string(v)) {}                 // NOLINT
  Param(int v) : value(std::to_string(v)) {}                       // NOLINT
  Param(double v);                                                 // NOLINT
  static Param bytes(std::string_view raw) {
    Param p{std::string(raw)};
    p.binary = true;
    return p;
  }
  static Param null() { return {}; }
};

/// Column types a reader checks a result against: PostgreSQL's built-in type OIDs, the same in
/// every server version.
enum class Type : unsigned {
  Bool = 16,
  Bytea = 17,
  Int8 = 20,
  Int4 = 23,
  Text = 25,
  Timestamptz = 1184,
  Interval = 1186,
  Uuid = 2950,
  Jsonb = 3802,
};

/// One result set. Values are text unless the statement asked for binary results.
class Result {
 public:
  explicit Result(PGresult* r) : m_res(r, &PQclear) {}
  [[nodiscard]] int rows() const { return PQntuples(m_res.get()); }
  /// The position of a column. Throws QueryError 42703 naming it when the result has none by
  /// that name: a store of another shape than this binary's (e.g. an older schema).
  [[nodiscard]] int column(const char* name) const;
  /// The same, and the column must be of `type`, else QueryError 42804 naming both types. A
  /// reader of binary results resolves its columns this way once per result, then reads by
  /// position: bytes are never read as a type they are not.
  [[nodiscard]] int column(const char* name, Type type) const;
  [[nodiscard]] bool isNull(int row, int col) const { return PQgetisnull(m_res.get(), row, col) != 0; }
  [[nodiscard]] std::string_view text(int row, int col) const {
    return {PQgetvalue(m_res.get(), row, col), static_cast<std::size_t>(PQgetlength(m_res.get(), row, col))};
  }
  [[nodiscard]] std::string str(int row, const char* name) const { return std::string(text(row, column(name))); }
  [[nodiscard]] std::optional<std::string> optStr(int row, const char* name) const;
  [[nodiscard]] long long integer(int row, const char* name) const;
  [[nodiscard]] double real(int row, const char* name) const;
  [[nodiscard]] bool boolean(int row, const char* name) const { return text(row, column(name)) == "t"; }
  /// Decodes a bytea column returned in text (hex) format.
  [[nodiscard]] std::string bytes(int row, const char* name) const;
  [[nodiscard]] long long affected() const;

  // Binary-format accessors (execPrepared with binaryResults).
  [[nodiscard]] int binInt32(int row, const char* name) const;
  [[nodiscard]] long long binInt64(int row, const char* name) const;
  /// timestamptz as epoch milliseconds.
  [[nodiscard]] long long binTimestampMs(int row, const char* name) const;
  /// uuid in its canonical text form.
  [[nodiscard]] std::string binUuid(int row, const char* name) const;
  /// jsonb as JSON text (the version byte stripped).
  [[nodiscard]] std::string_view binJsonb(int row, const char* name) const;
  // The same by position, as resolved by column(name, type).
  [[nodiscard]] bool binBoolAt(int row, int col) const;
  [[nodiscard]] int binInt32At(int row, int col) const;
  [[nodiscard]] long long binInt64At(int row, int col) const;
  [[nodiscard]] long long binTimestampMsAt(int row, int col) const;
  [[nodiscard]] std::string binUuidAt(int row, int col) const;
  [[nodiscard]] std::string_view binJsonbAt(int row, int col) const;
  [[nodiscard]] PGresult* get() const { return m_res.get(); }

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> m_res;
};

enum class TxState { Idle, InTransaction, Failed, Unknown };

/// One connection. Not thread-safe: a connection belongs to one thread at a time (the pool
/// hands it out exclusively).
class AsyncConnection;

class Connection {
 public:
  /// Connects; throws Unavailable when the server cannot be reached.
  explicit Connection(const std::string& conninfo);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  Connection(Connection&&) = default;
  Connection& operator=(Connection&&) = default;
  ~Connection() = default;

  /// Runs a statement with bound parameters (one round trip). Throws QueryError or Unavailable.
  Result exec(std::string_view sql, const std::vector<Param>& params = {});
  /// Runs a prepared statement, preparing it on first use on this connection. With
  /// binaryResults the values come in PostgreSQL's binary format (read them with the
  /// Result's binary accessors): no hex-encoding of bytea, no numeric conversions.
  /// The server-side name carries a hash of the text, so a name can never run other SQL (two
  /// Idem versions behind one pooler during a rolling deploy). A pooler in transaction mode
  /// (PgBouncer before 1.21, or without max_prepared_statements) hands each transaction to
  /// another server connection, where the statement is unknown or already prepared: outside a
  /// transaction block the statement then runs unnamed instead (nothing ran yet, so that is
  /// safe) and the connection sends unnamed statements from then on.
  Result execPrepared(const std::string& name, std::string_view sql, const std::vector<Param>& params = {},
                      bool binaryResults = false);
  /// false: execPrepared sends unnamed statements (parsed and planned every time), which any
  /// pooler accepts. Starts true; turns false by itself when a pooler is detected (above).
  void setPreparedStatements(bool on);
  [[nodiscard]] bool preparedStatements() const { return m_usePrepared; }
  /// Runs several statements as one pipeline (one network round trip); all or nothing when the
  /// caller wraps them in BEGIN/COMMIT. Returns one Result per statement. Statements with
  /// parameters run prepared (as execPrepared's; unnamed once a pooler was met), so a pipeline
  /// sent on every request is not parsed and planned every time.
  std::vector<Result> pipeline(const std::vector<std::pair<std::string, std::vector<Param>>>& statements);
  /// COPY … FROM STDIN with `data` in COPY text format: the cheapest way to append many rows.
  void copyIn(std::string_view copySql, std::string_view data);
  /// Runs a script of several statements without parameters (migrations).
  void script(std::string_view sql);

  [[nodiscard]] bool healthy() const { return PQstatus(m_conn.get()) == CONNECTION_OK; }
  /// A statement sent or received more than kRetireAfterBytes (a large stored body): libpq grew
  /// its buffers to hold it and never shrinks them, so the pool closes this connection instead of
  /// keeping it (16 connections after one 15 MiB replay each held 240 MiB for good).
  [[nodiscard]] bool retiring() const { return m_retire; }
  static constexpr std::size_t kRetireAfterBytes = std::size_t{1} << 20;
  [[nodiscard]] PGconn* raw() const { return m_conn.get(); }
  /// Between statements: outside a transaction, inside one, inside a failed one (only ROLLBACK
  /// helps), or neither (a statement is running, or the connection broke).
  [[nodiscard]] TxState transactionState() const;

 private:
  friend class AsyncConnection;  // the same handle and statements, driven by an event loop
  struct Adopt {};
  /// Owns a handle libpq connected elsewhere (PQconnectStart … PQconnectPoll).
  Connection(PGconn* connected, Adopt);
  Result check(PGresult* r);
  void noteTransfer(std::size_t bytes);
  std::vector<Result> pipelineOnce(const std::vector<std::pair<std::string, std::vector<Param>>>& statements);
  Result execUnnamed(std::string_view sql, const std::vector<Param>& params, bool binaryResults);
  /// A statement prepared on this connection failed because a pooler moved the session.
  Result afterPoolerMovedSession(PGresult* failed, std::string_view sql, const std::vector<Param>& params,
                                 bool binaryResults);

  struct Prepared {
    std::string name;        // the caller's
    std::string serverName;  // name + hash of the text
  };
  std::unique_ptr<PGconn, decltype(&PQfinish)> m_conn;
  std::vector<Prepared> m_prepared;
  bool m_usePrepared = true;
  bool m_retire = false;
};

/// The means to cancel the statement running on one connection, taken while the connection is
/// free and usable from any thread for as long as the connection lives (libpq's PGcancel).
class CancelHandle {
 public:
  explicit CancelHandle(const Connection& conn) : m_cancel(PQgetCancel(conn.raw()), &PQfreeCancel) {}
  /// Asks the server to cancel whatever runs now (a statement that then fails with 57014).
  /// Opens a short connection of its own: it blocks, so never call it on a GUI thread.
  /// false: the request could not be sent.
  bool send() const;

 private:
  std::unique_ptr<PGcancel, decltype(&PQfreeCancel)> m_cancel;
};

/// Quotes a value as a SQL identifier (for CREATE DATABASE in tests and the demo only).
std::string quoteIdentifier(std::string_view name);

/// Appends `value` to a COPY text-format line, escaping what COPY treats specially.
void appendCopyField(std::string& line, std::string_view value);

/// Decodes PostgreSQL's bytea text output ("\x0a1b...").
std::string decodeByteaHex(std::string_view text);

}  // namespace idem::pg
