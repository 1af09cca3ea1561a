#include "ui/explain/reportwriter.h"

#include <QFile>
#include <QPageLayout>
#include <QPageSize>
#include <QPrinter>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextImageFormat>
#include <QUrl>

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

/// The Markdown with the timeline picture under it, so the ticket shows the executions and the gap.
void fillDocument(QTextDocument& doc, const ExplanationReport& report) {
  doc.setMarkdown(report.markdown);
  if (report.timeline.isNull()) return;
  doc.addResource(QTextDocument::ImageResource, QUrl(u"timeline.png"_s), report.timeline);
  QTextCursor cursor(&doc);
  cursor.movePosition(QTextCursor::End);
  cursor.insertBlock();
  QTextImageFormat image;
  image.setName(u"timeline.png"_s);
  image.setWidth(std::min(640, report.timeline.width()));
  cursor.insertImage(image);
}

}  // namespace

bool writeReport(const ExplanationReport& report, const QString& path, ExplanationReport::Format format,
                 QString* error) {
  using Format = ExplanationReport::Format;
  if (report.markdown.isEmpty()) {
    if (error) *error = QObject::tr("there is no explanation to export");
    return false;
  }
  if (format == Format::Pdf) {
    QPrinter printer(QPrinter::HighResolution);
    printer.setOutputFormat(QPrinter::PdfFormat);
    printer.setOutputFileName(path);
    printer.setPageSize(QPageSize(QPageSize::A4));
    printer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
    printer.setDocName(report.title);
    QTextDocument doc;
    fillDocument(doc, report);
    doc.print(&printer);
    if (!QFile::exists(path)) {
      if (error) *error = QObject::tr("the PDF could not be written to %1").arg(path);
      return false;
    }
    return true;
  }
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    if (error) *error = file.errorString();
    return false;
  }
  if (format == Format::Markdown) {
    file.write(report.markdown.toUtf8());
  } else {
    QTextDocument doc;
    doc.setMarkdown(report.markdown);
    file.write(doc.toHtml().toUtf8());
  }
  return file.error() == QFileDevice::NoError;
}

}  // namespace idem::ui
