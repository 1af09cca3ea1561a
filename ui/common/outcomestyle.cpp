#include "ui/common/outcomestyle.h"

#include <QCoreApplication>

using namespace Qt::StringLiterals;

namespace idem::ui {

OutcomeStyle outcomeStyle(const QString& o) {
  auto tr = [](const char* s) { return QCoreApplication::translate("Outcome", s); };
  if (o == u"executed"_s) return {QColor(0x1f, 0x6f, 0xd1), MarkerShape::Circle, tr("executed")};
  if (o == u"replayed"_s) return {QColor(0x2e, 0x9e, 0x44), MarkerShape::Ring, tr("replayed")};
  if (o == u"conflict"_s) return {QColor(0xe0, 0x9b, 0x00), MarkerShape::Triangle, tr("409 conflict")};
  if (o == u"waited"_s) return {QColor(0xe0, 0x9b, 0x00), MarkerShape::Ring, tr("waited, then replayed")};
  if (o == u"mismatch"_s) return {QColor(0xd0, 0x31, 0x2d), MarkerShape::Square, tr("422 fingerprint mismatch")};
  if (o == u"rejected_expired"_s) return {QColor(0xd0, 0x31, 0x2d), MarkerShape::Square, tr("422 rejected: expired")};
  if (o == u"executed_after_expiry"_s)
    return {QColor(0xc0, 0x1c, 0xb0), MarkerShape::Diamond, tr("executed after expiry")};
  if (o == u"lease_takeover"_s) return {QColor(0x1f, 0x6f, 0xd1), MarkerShape::Diamond, tr("lease taken over")};
  if (o == u"released"_s) return {QColor(0x80, 0x80, 0x80), MarkerShape::Ring, tr("released (not stored)")};
  if (o == u"lease_lost"_s) return {QColor(0x80, 0x80, 0x80), MarkerShape::Cross, tr("lease lost")};
  return {QColor(0x80, 0x80, 0x80), MarkerShape::Cross, o};
}

bool isExecution(const QString& o) {
  return o == u"executed"_s || o == u"executed_after_expiry"_s || o == u"lease_takeover"_s;
}

}  // namespace idem::ui
