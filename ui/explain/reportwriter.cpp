#include "ui/explain/reportwriter.h"

#include <QAbstractTextDocumentLayout>
#include <QFile>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>

#include "ui/explain/reporthtml.h"
#include "ui/explain/timelineobject.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

bool writePdf(const ExplanationReport& report, const QString& path, QString* error) {
  QPdfWriter writer(path);
  writer.setResolution(600);  // text and vectors are resolution-free; this is the layout grid
  writer.setPageSize(QPageSize(QPageSize::A4));
  writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
  writer.setTitle(report.title);
  writer.setCreator(u"Idem console"_s);
  QPainter painter;
  if (!painter.begin(&writer)) {
    if (error) *error = QObject::tr("the PDF could not be written to %1").arg(path);
    return false;
  }
  const QRectF page = writer.pageLayout().paintRectPixels(writer.resolution());
  QTextDocument doc;
  doc.documentLayout()->setPaintDevice(&writer);
  TimelineObject timeline(report.timelineSvg);
  doc.documentLayout()->registerHandler(TimelineObject::kType, &timeline);
  doc.setDocumentMargin(0);
  doc.setHtml(report.html);
  // Cell padding as the layout reads it (in 96-dpi pixels, scaled by the layout to the writer's
  // resolution): the same breathing room as the HTML's CSS.
  for (QTextFrame* frame : doc.rootFrame()->childFrames())
    if (auto* table = qobject_cast<QTextTable*>(frame)) {
      for (int r = 0; r < table->rows(); ++r)
        for (int c = 0; c < table->columns(); ++c) {
          QTextTableCell cell = table->cellAt(r, c);
          QTextTableCellFormat format = cell.format().toTableCellFormat();
          format.setTopPadding(1.5);
          format.setBottomPadding(1.5);
          format.setLeftPadding(4);
          format.setRightPadding(4);
          cell.setFormat(format);
        }
    }
  TimelineObject::replacePlaceholder(doc, QString::fromLatin1(kTimelinePlaceholder), !timeline.isValid());
  // A table never breaks a value (its cells are nowrap): when the page is too narrow for it,
  // the whole document is laid out wider and drawn scaled down to the page, as a print
  // dialog's "fit to width" does.
  double scale = 1.0;
  for (int i = 0; i < 4; ++i) {
    doc.setPageSize(QSizeF(page.width() / scale, page.height() / scale));
    timeline.setWidth(page.width() / scale);
    doc.markContentsDirty(0, doc.characterCount());
    const double needed = doc.documentLayout()->documentSize().width();
    if (needed <= page.width() / scale + 0.5) break;
    scale = page.width() / needed;
  }
  const int pages = doc.pageCount();
  const double pageHeight = page.height() / scale;
  for (int i = 0; i < pages; ++i) {
    if (i > 0) writer.newPage();
    painter.save();
    painter.scale(scale, scale);
    painter.translate(0, -i * pageHeight);
    QAbstractTextDocumentLayout::PaintContext ctx;
    ctx.clip = QRectF(0, i * pageHeight, page.width() / scale, pageHeight);
    painter.setClipRect(ctx.clip);
    doc.documentLayout()->draw(&painter, ctx);
    painter.restore();
  }
  painter.end();
  if (!QFile::exists(path)) {
    if (error) *error = QObject::tr("the PDF could not be written to %1").arg(path);
    return false;
  }
  return true;
}

}  // namespace

bool writeReport(const ExplanationReport& report, const QString& path, ExplanationReport::Format format,
                 QString* error) {
  using Format = ExplanationReport::Format;
  if (report.markdown.isEmpty() || report.html.isEmpty()) {
    if (error) *error = QObject::tr("there is no explanation to export");
    return false;
  }
  if (format == Format::Pdf) return writePdf(report, path, error);
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    if (error) *error = file.errorString();
    return false;
  }
  if (format == Format::Markdown) {
    file.write(report.markdown.toUtf8());
  } else {
    QByteArray html = report.html.toUtf8();
    // Inline: the XML prologue belongs to a file of its own.
    const qsizetype start = report.timelineSvg.indexOf("<svg");
    html.replace(kTimelinePlaceholder, start >= 0 ? report.timelineSvg.mid(start) : QByteArray());
    file.write(html);
  }
  return file.error() == QFileDevice::NoError;
}

}  // namespace idem::ui
