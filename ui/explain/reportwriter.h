#pragma once
// An explanation written to a file, as a value: made on the GUI thread (the Markdown, the HTML
// document and a vector recording of the timeline), laid out and written anywhere. Laying out a
// PDF takes long enough to stall the window, so the console writes reports on a pool thread
// (docs/design.md §7); painting on a QPdfWriter, QSvgRenderer and
// QTextDocument off the GUI thread are supported by Qt.
#include <QByteArray>
#include <QString>

namespace idem::ui {

struct ExplanationReport {
  enum class Format { Markdown, Html, Pdf };
  QString markdown;
  QString html;      ///< reportHtml(): the document, with kTimelinePlaceholder where the timeline goes
  QString title;     ///< the PDF's document name
  /// The timeline as SVG (vectors: inline in HTML, drawn as paths and text in PDF); may be empty.
  QByteArray timelineSvg;
};

/// Writes the report to path; false with *error set when it cannot. Any thread.
bool writeReport(const ExplanationReport& report, const QString& path, ExplanationReport::Format format,
                 QString* error);

}  // namespace idem::ui
