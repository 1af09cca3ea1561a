#pragma once
// The key browser's optional filter values as bound parameters: NULL when not set, so that
// "$n IS NULL OR …" folds away (keyquery.cpp, duplicatequery.cpp).
#include <QDateTime>
#include <QString>
#include <optional>

#include "core/store/pg.h"

namespace idem::ui {

[[nodiscard]] inline pg::Param optText(const QString& s) {
  return s.isEmpty() ? pg::Param::null() : pg::Param(s.toStdString());
}
[[nodiscard]] inline pg::Param optTime(const std::optional<QDateTime>& t) {
  return t ? pg::Param(t->toUTC().toString(Qt::ISODateWithMs).toStdString()) : pg::Param::null();
}

}  // namespace idem::ui
