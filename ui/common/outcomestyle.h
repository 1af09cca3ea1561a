#pragma once
// One meaning per colour across the console: executed blue, replayed green, 409 amber,
// 422/rejected red, executed after expiry magenta (the duplicate charge), not stored grey.
// Colour and marker follow the outcome's kind (core/trace/outcome.h); the label is core's.
#include <QColor>
#include <QString>

#include "core/trace/outcome.h"

namespace idem::ui {

enum class MarkerShape { Circle, Ring, Triangle, Square, Diamond, Cross };

struct OutcomeStyle {
  QColor color;
  MarkerShape shape;
  QString label;  ///< "executed after expiry"
};

[[nodiscard]] OutcomeStyle outcomeStyle(trace::Outcome outcome);
/// The style of a stored outcome name; one this build does not know is a grey cross.
[[nodiscard]] OutcomeStyle outcomeStyle(const std::string& outcome);

}  // namespace idem::ui
