#include "core/store/transaction.h"

namespace idem::pg {
namespace {
const char* beginStatement(Transaction::Mode mode) {
  return mode == Transaction::Mode::ReadOnlySnapshot ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN";
}
}  // namespace

Transaction::Transaction(Connection& conn, Mode mode) : Transaction(conn, mode, Start::Begin) {}

Transaction Transaction::joinOrBegin(Connection& conn, Mode mode) {
  return {conn, mode, conn.transactionState() == TxState::Idle ? Start::Begin : Start::Join};
}

Transaction Transaction::begunByPipeline(Connection& conn) { return {conn, Mode::ReadWrite, Start::Pipeline}; }

Transaction::Transaction(Connection& conn, Mode mode, Start start)
    : m_conn(conn), m_owned(start != Start::Join), m_open(m_owned) {
  if (start == Start::Begin) m_conn.exec(beginStatement(mode));
}

Transaction::~Transaction() {
  if (m_open) rollback();
}

void Transaction::commit() {
  if (!m_open) return;
  m_open = false;
  m_conn.exec("COMMIT");
}

bool Transaction::rollback() noexcept {
  if (!m_owned) return true;
  m_open = false;
  if (!m_conn.healthy()) return false;
  // Already idle: the transaction ended itself (a COMMIT inside the caller's statements).
  if (m_conn.transactionState() == TxState::Idle) return true;
  try {
    m_conn.exec("ROLLBACK");
  } catch (...) {
    return false;
  }
  return m_conn.transactionState() == TxState::Idle;
}

}  // namespace idem::pg
