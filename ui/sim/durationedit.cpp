#include "ui/sim/durationedit.h"

using namespace Qt::StringLiterals;

namespace idem::ui::sim {

DurationEdit::DurationEdit(bool allowNone, QWidget* parent) : QLineEdit(parent), m_allowNone(allowNone) {
  setPlaceholderText(allowNone ? tr("none") : u"3s"_s);
  setToolTip(allowNone ? tr("A duration such as 250ms, 3s, 30m, 24h or 7d; empty for none.")
                       : tr("A duration such as 250ms, 3s, 30m, 24h or 7d."));
  setMaximumWidth(110);
  connect(this, &QLineEdit::textEdited, this, &DurationEdit::parse);
}

void DurationEdit::setDuration(std::optional<idem::sim::Usec> d) {
  m_value = d;
  m_valid = true;
  setText(d ? QString::fromStdString(idem::sim::formatDuration(*d)) : QString());
  setStyleSheet(QString());
}

void DurationEdit::parse() {
  const QString t = text().trimmed();
  if (t.isEmpty() || t == u"none"_s) {
    m_valid = m_allowNone;
    if (m_valid) m_value.reset();
  } else if (auto d = idem::sim::parseDuration(t.toStdString())) {
    m_valid = true;
    m_value = *d;
  } else {
    m_valid = false;
  }
  setStyleSheet(m_valid ? QString() : u"QLineEdit { background: #fde2e2; }"_s);
  if (m_valid) emit durationChanged();
}

}  // namespace idem::ui::sim
