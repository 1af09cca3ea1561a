#pragma once
// The answer a worker hands back for one job: a value, or an error a view can show.
#include <QString>
#include <optional>

namespace idem::ui {

struct DbError {
  enum class Kind { None, NotConnected, Unavailable, Query, Cancelled, Other };
  Kind kind = Kind::None;
  QString message;
  QString sqlstate;
  [[nodiscard]] bool isError() const { return kind != Kind::None; }
};

template <class R>
struct DbResult {
  std::optional<R> value;
  DbError error;
  [[nodiscard]] bool ok() const { return value.has_value(); }
};

}  // namespace idem::ui
