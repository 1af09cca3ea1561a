#include "ui/tiers/logtimeaxis.h"

#include <QCategoryAxis>
#include <QCoreApplication>
#include <cmath>

namespace idem::ui {
namespace {

struct Mark {
  double ms;
  const char* label;
  bool major = false;
};

// Round durations a reader recognises; the axis labels the ones inside its range.
constexpr Mark kMarks[] = {
    {100, QT_TRANSLATE_NOOP("LogTimeAxis", "100 ms")},
    {1e3, QT_TRANSLATE_NOOP("LogTimeAxis", "1 s"), true},
    {1e4, QT_TRANSLATE_NOOP("LogTimeAxis", "10 s")},
    {6e4, QT_TRANSLATE_NOOP("LogTimeAxis", "1 min"), true},
    {6e5, QT_TRANSLATE_NOOP("LogTimeAxis", "10 min")},
    {3.6e6, QT_TRANSLATE_NOOP("LogTimeAxis", "1 h"), true},
    {2.16e7, QT_TRANSLATE_NOOP("LogTimeAxis", "6 h")},
    {8.64e7, QT_TRANSLATE_NOOP("LogTimeAxis", "24 h"), true},
    {2.592e8, QT_TRANSLATE_NOOP("LogTimeAxis", "3 days")},
    {6.048e8, QT_TRANSLATE_NOOP("LogTimeAxis", "7 days")},
    {2.592e9, QT_TRANSLATE_NOOP("LogTimeAxis", "30 days"), true},
    {7.776e9, QT_TRANSLATE_NOOP("LogTimeAxis", "90 days")},
    {3.1536e10, QT_TRANSLATE_NOOP("LogTimeAxis", "1 year"), true},
    {6.3072e10, QT_TRANSLATE_NOOP("LogTimeAxis", "2 years")},
};

}  // namespace

double logMs(double ms) { return ms <= 1.0 ? 0.0 : std::log10(ms); }
double fromLogMs(double x) { return std::pow(10.0, x); }

double setLogTimeRange(QCategoryAxis* axis, double minMs, double maxMs, bool sparse, bool fromZero) {
  minMs = std::max(minMs, kMarks[0].ms);
  maxMs = std::max(maxMs, minMs * 10);
  // Widen to the marks around the range so the ends are labelled.
  auto used = [sparse](const Mark& m) { return !sparse || m.major; };
  double lo = 0, hi = 0;  // the largest mark <= minMs and the smallest >= maxMs, else the ends
  for (const auto& m : kMarks) {
    if (!used(m)) continue;
    if (lo == 0 || m.ms <= minMs) lo = m.ms;
  }
  for (auto it = std::rbegin(kMarks); it != std::rend(kMarks); ++it) {
    if (!used(*it)) continue;
    if (hi == 0 || it->ms >= maxMs) hi = it->ms;
  }
  const double origin = fromZero ? logMs(lo) : 0.0;
  for (const QString& label : axis->categoriesLabels()) axis->remove(label);
  axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  axis->setStartValue(logMs(lo) - origin - 1e-6);  // the first label sits on the start: a category needs width
  for (const auto& m : kMarks)
    if (used(m) && m.ms >= lo && m.ms <= hi)
      axis->append(QCoreApplication::translate("LogTimeAxis", m.label), logMs(m.ms) - origin);
  axis->setRange(logMs(lo) - origin, logMs(hi) - origin);
  return origin;
}

}  // namespace idem::ui
