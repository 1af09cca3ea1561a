#include "ui/keydata/keydetail.h"

#include <QObject>

using namespace Qt::StringLiterals;

namespace idem::ui {

const SharedKeyDetail& noKeyDetail() {
  static const SharedKeyDetail none = std::make_shared<const KeyDetail>();
  return none;
}

QDateTime toDateTime(explain::Instant t) { return QDateTime::fromMSecsSinceEpoch(t.micros / 1000, Qt::UTC); }
QDateTime toDateTime(const std::optional<explain::Instant>& t) { return t ? toDateTime(*t) : QDateTime(); }

QDateTime KeyDetail::serverNow() const {
  return ref.isValid() ? toDateTime(explanation.history.observedAt) : QDateTime();
}

QString KeyDetail::unansweredNote() const {
  if (explanation.unanswered == 0) return {};
  return u" "_s % QObject::tr("(%n with no answer from the service)", nullptr, explanation.unanswered);
}

const explain::Generation* KeyDetail::live() const {
  for (const auto& g : generations())
    if (g.live) return &g;
  return nullptr;
}

}  // namespace idem::ui
