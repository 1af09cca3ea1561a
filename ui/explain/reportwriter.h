#pragma once
// An explanation written to a file, as a value: made on the GUI thread (the Markdown and a
// picture of the timeline), laid out and written anywhere. Laying out a PDF takes long enough to
// stall the window, so the console writes reports on a pool thread (docs/design.md §7); QPainter
// on a QPrinter and QTextDocument off the GUI thread are supported by Qt.
#include <QImage>
#include <QString>

namespace idem::ui {

struct ExplanationReport {
  enum class Format { Markdown, Html, Pdf };
  QString markdown;
  QString title;   ///< the PDF's document name
  QImage timeline; ///< shown under the text in HTML and PDF; may be null
};

/// Writes the report to path; false with *error set when it cannot. Any thread.
bool writeReport(const ExplanationReport& report, const QString& path, ExplanationReport::Format format,
                 QString* error);

}  // namespace idem::ui
