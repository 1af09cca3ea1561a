#pragma once
// One meaning per colour across the console (docs/design.md §7): executed blue, replayed green,
// 409 amber, 422/rejected red, executed after expiry magenta (the duplicate charge).
#include <QColor>
#include <QString>

namespace idem::ui {

enum class MarkerShape { Circle, Ring, Triangle, Square, Diamond, Cross };

struct OutcomeStyle {
  QColor color;
  MarkerShape shape;
  QString label;  ///< "executed after expiry"
};

/// The style of an idem.events outcome; unknown outcomes are grey crosses.
[[nodiscard]] OutcomeStyle outcomeStyle(const QString& outcome);
/// True for outcomes that ran the operation (count towards "executions").
[[nodiscard]] bool isExecution(const QString& outcome);

}  // namespace idem::ui
