#include "ui/explain/timelineobject.h"

#include <QPainter>
#include <QTextCursor>
#include <QTextDocument>

namespace idem::ui {

void TimelineObject::replacePlaceholder(QTextDocument& doc, const QString& placeholder, bool empty) {
  QTextCursor found = doc.find(placeholder);
  if (found.isNull()) return;
  found.removeSelectedText();
  if (empty) return;
  QTextCharFormat object;
  object.setObjectType(kType);
  found.insertText(QString(QChar::ObjectReplacementCharacter), object);
}

QSizeF TimelineObject::intrinsicSize(QTextDocument*, int, const QTextFormat&) {
  const QSizeF size = m_svg.viewBoxF().size();
  if (!isValid() || size.isEmpty()) return {};
  return {m_width, m_width * size.height() / size.width()};
}

void TimelineObject::drawObject(QPainter* painter, const QRectF& rect, QTextDocument*, int, const QTextFormat&) {
  if (!isValid()) return;
  m_svg.render(painter, rect);
}

}  // namespace idem::ui
