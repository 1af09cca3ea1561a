#pragma once
// What pg::Connection and pg::AsyncConnection share of libpq's wire handling: how parameters are
// handed to libpq, which failures mean the connection is gone, and the names prepared statements
// carry on the server. Private to the store.
#include <libpq-fe.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/store/pg.h"

namespace idem::pg::wire {

/// Parameters as the arrays PQsendQueryPrepared and friends take; views into `params`.
struct ParamArrays {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  std::size_t bytes = 0;
  explicit ParamArrays(const std::vector<Param>& params);
};

/// The connection is gone (its status, or an error of class 08 or 57P): not the statement's fault.
bool isConnectionLoss(PGconn* conn, const PGresult* r);
/// libpq's message without its trailing newline.
std::string trimmed(const char* message);
/// The statement's server-side name: the caller's name plus a hash of its text, so one name can
/// never run other SQL (two versions of Idem behind one pooler).
std::string serverStatementName(const std::string& name, std::string_view sql);
/// A prepared statement failed because a pooler in transaction mode moved the session: it is
/// unknown (26000) or already prepared (42P05) on the server connection the pooler chose.
bool poolerMovedSession(const PGresult* r);

}  // namespace idem::pg::wire
