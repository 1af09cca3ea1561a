#pragma once
// The explanation as an HTML document laid out for the page: a heading, the facts, core's
// narrative, the timeline (a placeholder the writer fills with vectors: SVG in HTML, painter
// calls in PDF), then the generations and events as tables whose cells never wrap — a time,
// an id or a number broken over two lines is misread. Built on the GUI thread from the models
// the tabs show, so the document reads as the console does.
#include <QList>
#include <QString>

#include "ui/keydata/keydetail.h"

class QAbstractItemModel;

namespace idem::ui {

/// Where the timeline goes in reportHtml's output.
inline constexpr const char* kTimelinePlaceholder = "@@IDEM-TIMELINE@@";
/// Events listed in a report's table (the Trace tab lists them all).
inline constexpr int kMaxReportEvents = 200;

/// An HTML table of model's columns (display text, header labels), at most maxRows rows.
[[nodiscard]] QString modelTableHtml(const QAbstractItemModel& model, const QList<int>& columns, int maxRows);
/// The whole document, <html> to </html>, with the print stylesheet.
[[nodiscard]] QString reportHtml(const SharedKeyDetail& detail);

}  // namespace idem::ui
