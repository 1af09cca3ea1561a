#pragma once
// The timeline inside a QTextDocument laid out for print: a text object that draws the
// timeline's SVG scaled to the text width, so a PDF gets the paths and text of the chart, not
// a bitmap of the screen.
#include <QObject>
#include <QSvgRenderer>
#include <QTextObjectInterface>

class QTextDocument;

namespace idem::ui {

class TimelineObject final : public QObject, public QTextObjectInterface {
  Q_OBJECT
  Q_INTERFACES(QTextObjectInterface)

 public:
  static constexpr int kType = QTextFormat::UserObject + 19;

  explicit TimelineObject(const QByteArray& svg) : m_svg(svg) {}
  [[nodiscard]] bool isValid() const { return m_svg.isValid(); }
  /// The width it is drawn at (the document's text width).
  void setWidth(double width) { m_width = width; }

  /// Replaces the paragraph holding placeholder with the object (or nothing when empty).
  static void replacePlaceholder(QTextDocument& doc, const QString& placeholder, bool empty);

  QSizeF intrinsicSize(QTextDocument* doc, int posInDocument, const QTextFormat& format) override;
  void drawObject(QPainter* painter, const QRectF& rect, QTextDocument* doc, int posInDocument,
                  const QTextFormat& format) override;

 private:
  QSvgRenderer m_svg;
  double m_width = 100;
};

}  // namespace idem::ui
