#include "ui/common/outcomestyle.h"

#include <QCoreApplication>

namespace idem::ui {
namespace {

const QColor kBlue(0x1f, 0x6f, 0xd1);
const QColor kMagenta(0xc0, 0x1c, 0xb0);
const QColor kGreen(0x2e, 0x9e, 0x44);
const QColor kAmber(0xe0, 0x9b, 0x00);
const QColor kRed(0xd0, 0x31, 0x2d);
const QColor kGrey(0x80, 0x80, 0x80);
const QColor kSlate(0x6a, 0x5a, 0xcd);  // observe: a decision recorded, not enforced

}  // namespace

OutcomeStyle outcomeStyle(trace::Outcome o) {
  using trace::Outcome;
  const QString label = QCoreApplication::translate("Outcome", std::string(trace::label(o)).c_str());
  switch (trace::kind(o)) {
    case trace::OutcomeKind::Execution:
      // A second execution after expiry is the duplicate support looks for: it stands out.
      if (o == Outcome::ExecutedAfterExpiry) return {kMagenta, MarkerShape::Diamond, label};
      return {kBlue, o == Outcome::Executed ? MarkerShape::Circle : MarkerShape::Diamond, label};
    case trace::OutcomeKind::Replay: return {kGreen, MarkerShape::Ring, label};
    case trace::OutcomeKind::InProgress: return {kAmber, MarkerShape::Triangle, label};
    case trace::OutcomeKind::Refused: return {kRed, MarkerShape::Square, label};
    case trace::OutcomeKind::NotStored:
      return {kGrey, o == Outcome::Released ? MarkerShape::Ring : MarkerShape::Cross, label};
    case trace::OutcomeKind::Observed: return {kSlate, MarkerShape::Ring, label};
    // A request that another key already ran: the duplicate support looks for, flagged.
    case trace::OutcomeKind::CrossKey:
      return {kMagenta, o == Outcome::DuplicateHeld || o == Outcome::DuplicateRejected ? MarkerShape::Square
                                                                                      : MarkerShape::Diamond,
              label};
  }
  return {kGrey, MarkerShape::Cross, label};
}

OutcomeStyle outcomeStyle(const std::string& outcome) {
  if (const auto o = trace::parseOutcome(outcome)) return outcomeStyle(*o);
  return {kGrey, MarkerShape::Cross, QString::fromStdString(outcome)};
}

}  // namespace idem::ui
