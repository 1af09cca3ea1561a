#pragma once
// A logarithmic time axis for QtCharts: values are log10(milliseconds) and the labels are
// durations people read ("1 min", "24 h", "7 days"). QLogValueAxis would label 8.64e+07.
#include <QString>
#include <QtGlobal>

class QCategoryAxis;

namespace idem::ui {

/// Chart coordinate of a duration: log10(ms), with anything under 1 ms at 0.
[[nodiscard]] double logMs(double ms);
/// The duration at a chart coordinate.
[[nodiscard]] double fromLogMs(double x);

/// Sets axis's range to cover [minMs, maxMs] (widened to the nearest labelled durations) and
/// puts a label and grid line at round durations inside it: all of them, or with sparse only
/// the major ones (1 s, 1 min, 1 h, 24 h, 30 days, 1 year) for a narrow chart.
/// With fromZero the axis runs from 0 and a duration d sits at logMs(d) minus the returned
/// origin (bars, which grow from 0, then start at the axis; an SVG export does not clip).
/// Returns that origin: logMs of the first mark with fromZero, else 0.
double setLogTimeRange(QCategoryAxis* axis, double minMs, double maxMs, bool sparse = false, bool fromZero = false);

}  // namespace idem::ui
