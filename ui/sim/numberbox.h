#pragma once
// The simulator editors' number field: a range, decimals, a unit suffix, and narrow enough to
// sit beside its label in a form.
#include <QDoubleSpinBox>
#include <QString>

namespace idem::ui::sim {

inline QDoubleSpinBox* numberBox(double lo, double hi, int decimals, const QString& suffix, QWidget* parent,
                                 int maxWidth = 130) {
  auto* box = new QDoubleSpinBox(parent);
  box->setRange(lo, hi);
  box->setDecimals(decimals);
  box->setSuffix(suffix);
  box->setMaximumWidth(maxWidth);
  return box;
}

}  // namespace idem::ui::sim
