#pragma once
// The two-ended protocol of a transaction as one object: begun when constructed, committed only
// by commit(), rolled back when it goes out of scope otherwise (an exception, an early return).
#include "core/store/pg.h"

namespace idem::pg {

class Transaction {
 public:
  enum class Mode {
    ReadWrite,
    /// One snapshot for several reads (REPEATABLE READ READ ONLY): the reads agree with each
    /// other, and it runs on a hot standby too.
    ReadOnlySnapshot,
  };

  /// Begins a transaction. Throws like any statement.
  explicit Transaction(Connection& conn, Mode mode = Mode::ReadWrite);
  /// Inside a transaction the caller opened, that one rules (its snapshot, its end): this object
  /// then commits and rolls back nothing. Otherwise begins one as above.
  [[nodiscard]] static Transaction joinOrBegin(Connection& conn, Mode mode);
  /// A transaction the caller's pipeline begins with its first statement (BEGIN) and ends with
  /// its last (COMMIT): call committedByPipeline() once the pipeline went through; otherwise
  /// it is rolled back like any other.
  [[nodiscard]] static Transaction begunByPipeline(Connection& conn);

  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Transaction(Transaction&&) = delete;
  Transaction& operator=(Transaction&&) = delete;
  /// Rolls back unless committed. Never throws: a broken connection has rolled back by itself.
  ~Transaction();

  /// COMMIT. Throws like any statement; the transaction is over either way.
  void commit();
  void committedByPipeline() { m_open = false; }
  /// ROLLBACK now. false: the connection could not take it (it broke, or is still busy);
  /// it must not be reused.
  bool rollback() noexcept;
  /// false when the caller's transaction was joined.
  [[nodiscard]] bool owned() const { return m_owned; }

 private:
  enum class Start { Begin, Join, Pipeline };
  Transaction(Connection& conn, Mode mode, Start start);

  Connection& m_conn;
  bool m_owned;
  bool m_open;  // ours and not ended yet
};

}  // namespace idem::pg
