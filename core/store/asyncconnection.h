#pragma once
// A PostgreSQL connection driven by an event loop: a statement is sent without blocking and its
// result comes back as a callback, so no thread is parked on the round trip (a thread parked per
// request cost the write path ~5.5 thread switches a key at 64 clients: tests/bench/RESULTS.md).
// Its statements and errors are pg::Connection's: the same server-side names for prepared
// statements, the same fall back to unnamed ones behind a pooler in transaction mode, the same
// Unavailable and QueryError.
//
// Not thread-safe: every call, and every callback, is on the executor it was opened with (give
// it a strand when that executor runs on several threads). One statement at a time.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/store/pg.h"

namespace idem::pg {

class AsyncConnection : public std::enable_shared_from_this<AsyncConnection> {
 public:
  /// A statement's result, or the error it would have thrown (Unavailable, QueryError).
  struct Outcome {
    std::optional<Result> result;
    std::exception_ptr error;
  };
  using Done = std::function<void(Outcome)>;
  /// `error` nullptr: `connection` is ready; else the Unavailable that says why not.
  using Opened = std::function<void(std::shared_ptr<AsyncConnection> connection, std::exception_ptr error)>;

  /// Starts connecting without blocking (libpq's PQconnectStart and PQconnectPoll); `opened` runs
  /// once, on `executor`.
  static std::shared_ptr<AsyncConnection> open(const boost::asio::any_io_executor& executor,
                                               const std::string& conninfo, Opened opened);
  AsyncConnection(const AsyncConnection&) = delete;
  AsyncConnection& operator=(const AsyncConnection&) = delete;
  ~AsyncConnection();

  /// Sends a statement, prepared on this connection on first use (as Connection::execPrepared:
  /// the first use costs one more round trip); `done` runs once, on the executor. The next
  /// statement only after `done`.
  void execPrepared(const std::string& name, std::string_view sql, std::vector<Param> params, bool binaryResults,
                    Done done);
  /// Ends the connection now; a statement in flight ends with Unavailable.
  void close();
  [[nodiscard]] bool busy() const { return static_cast<bool>(m_done); }
  /// false once connecting failed, the connection broke or it was closed: drop it.
  [[nodiscard]] bool healthy() const;
  /// It carried a statement over Connection::kRetireAfterBytes: close it rather than keep it.
  [[nodiscard]] bool retiring() const { return m_conn && m_conn->retiring(); }

 private:
  explicit AsyncConnection(const boost::asio::any_io_executor& executor);
  enum class Phase { Idle, Preparing, Executing, ExecutingUnnamed };

  void pollConnect(int lastPoll);
  void watchSocket();
  void sendPrepare();
  void sendPrepared();
  void sendUnnamed();
  void flushThenRead();
  void waitToRead();
  void readResults();
  void commandDone();
  void finish(Outcome outcome);
  void openFailed(const std::string& why);
  void lost(const std::string& what);
  /// The result as Connection::check() takes it: a Result, or the error it throws.
  Outcome outcomeOf(PGresult* raw);

  boost::asio::posix::stream_descriptor m_socket;
  std::unique_ptr<Connection> m_conn;  // owns libpq's handle from PQconnectStart on
  Opened m_opened;                     // while connecting
  bool m_closed = false;

  // The statement in flight.
  Phase m_phase = Phase::Idle;
  std::string m_name;
  std::string m_sql;
  std::vector<Param> m_params;
  bool m_binary = false;
  Done m_done;
  std::unique_ptr<PGresult, decltype(&PQclear)> m_first{nullptr, &PQclear};  // the command's result
};

}  // namespace idem::pg
