#include "ui/explain/reporthtml.h"

#include <QAbstractItemModel>

#include "ui/common/timefmt.h"
#include "ui/keydata/generationmodel.h"
#include "ui/keydata/keydetail.h"
#include "ui/trace/eventmodel.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

// Print sizes in points; cells never wrap (nowrap), the writer shrinks the font when a table
// would be wider than the page rather than break a value.
const char* const kStyle = R"(
  @page { size: A4; margin: 15mm; }
  body { font-family: 'DejaVu Sans', sans-serif; font-size: 9.5pt; color: #111; }
  h1 { font-size: 15pt; margin: 0 0 4pt 0; }
  h2 { font-size: 11.5pt; margin: 12pt 0 4pt 0; }
  p.key { font-family: 'DejaVu Sans Mono', monospace; font-size: 10pt; margin: 0 0 6pt 0; }
  p { margin: 0 0 6pt 0; }
  .facts td { padding: 1px 10px 1px 0; white-space: nowrap; }
  .facts td.label { color: #555; }
  table.data { border-collapse: collapse; font-size: 8.5pt; }
  table.data th { background: #eef1f5; text-align: left; white-space: nowrap; padding: 2px 6px; }
  table.data td { white-space: nowrap; padding: 2px 6px; border-bottom: 0.5pt solid #ccd; }
  td.num { text-align: right; }
  .duplicate { color: #c01cb0; font-weight: bold; }
  .timeline { margin: 6pt 0; }
  .timeline svg, .timeline img { width: 100%; height: auto; }
)";

QString cell(const QVariant& v) { return v.toString().toHtmlEscaped(); }

}  // namespace

QString modelTableHtml(const QAbstractItemModel& model, const QList<int>& columns, int maxRows) {
  QString html = u"<table class=\"data\" cellspacing=\"0\" cellpadding=\"3\"><thead><tr>"_s;
  for (int c : columns)
    html += u"<th style=\"white-space: nowrap\">"_s % cell(model.headerData(c, Qt::Horizontal, Qt::DisplayRole)) %
            u"</th>"_s;
  html += u"</tr></thead><tbody>"_s;
  const int rows = std::min(model.rowCount(), maxRows);
  for (int r = 0; r < rows; ++r) {
    html += u"<tr>"_s;
    for (int c : columns) {
      const QModelIndex index = model.index(r, c);
      const bool number = model.data(index, Qt::TextAlignmentRole).toInt() & Qt::AlignRight;
      html += (number ? u"<td class=\"num\" align=\"right\" style=\"white-space: nowrap\">"_s
                      : u"<td style=\"white-space: nowrap\">"_s) %
              cell(model.data(index)) % u"</td>"_s;
    }
    html += u"</tr>"_s;
  }
  html += u"</tbody></table>"_s;
  if (model.rowCount() > rows)
    html += u"<p>"_s % QObject::tr("… and %1 more (the console's Trace tab lists every one).").arg(model.rowCount() - rows) %
            u"</p>"_s;
  return html;
}

QString reportHtml(const SharedKeyDetail& shared) {
  const KeyDetail& d = *shared;
  const QString key = d.ref.key.toHtmlEscaped();
  QString html = u"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"_s %
                 QObject::tr("Idempotency key %1").arg(key) % u"</title><style>"_s % QLatin1String(kStyle) %
                 u"</style></head><body>\n"_s;
  // The key on a line of its own, whole (a key broken at a hyphen reads as two) and in a size
  // a UUID fits a narrow pane at: after the 15 pt heading it ran past the Explain pane's edge.
  html += u"<h1>"_s % QObject::tr("Idempotency key") % u"</h1>\n<p class=\"key\" style=\"white-space: nowrap\">"_s %
          key % u"</p>\n"_s;
  auto fact = [](const QString& label, const QString& value) -> QString {
    return u"<tr><td class=\"label\" style=\"white-space: nowrap\">"_s % label.toHtmlEscaped() %
           u"</td><td style=\"white-space: nowrap\">"_s % value % u"</td></tr>"_s;
  };
  html += u"<table class=\"facts\" cellspacing=\"0\">"_s;
  html += fact(QObject::tr("Scope"), QString(d.ref.tenant % u" "_s % d.ref.endpoint).toHtmlEscaped());
  html += fact(QObject::tr("Service"), d.ref.service.toHtmlEscaped());
  const QString runs = QObject::tr("%1 time(s)").arg(d.executions()) % d.unansweredNote().toHtmlEscaped();
  html += fact(QObject::tr("Executed"),
               d.executions() > 1 ? u"<span class=\"duplicate\">"_s % runs % u"</span>"_s : runs);
  html += fact(QObject::tr("Generations"), QString::number(d.generations().size()));
  html += fact(QObject::tr("As of"), formatAbsolute(d.serverNow()).toHtmlEscaped());
  html += u"</table>\n"_s;
  html += u"<h2>"_s % QObject::tr("What happened") % u"</h2>\n<p>"_s % d.narrative().toHtmlEscaped() % u"</p>\n"_s;
  // Core's resolution: which execution is the duplicate, what to do, and what would have
  // prevented it (the same words `idemctl explain` prints).
  const explain::Resolution& resolution = d.explanation.resolution;
  if (!resolution.proposal.empty())
    html += u"<h2>"_s % QObject::tr("Resolution") % u"</h2>\n<p class=\"duplicate\">"_s %
            QString::fromStdString(resolution.proposal).toHtmlEscaped() % u"</p>\n"_s;
  if (resolution.prevention)
    html += u"<h2>"_s % QObject::tr("Prevention") % u"</h2>\n<p>"_s %
            QString::fromStdString(resolution.prevention->text).toHtmlEscaped() % u"</p>\n"_s;
  // The pairs this key makes with other keys' executions of the same request (core's words).
  if (!d.explanation.crossKey.empty()) {
    html += u"<h2>"_s % QObject::tr("Duplicates across keys") % u"</h2>\n"_s;
    for (const auto& f : d.explanation.crossKey)
      html += u"<p><b>"_s %
              QObject::tr("%1 repeats %2")
                  .arg(QString::fromStdString(f.laterKey).toHtmlEscaped(), QString::fromStdString(f.earlierKey).toHtmlEscaped()) %
              u"</b> · "_s % formatAbsolute(toDateTime(f.at)).toHtmlEscaped() % u"<br>"_s %
              QString::fromStdString(f.text).toHtmlEscaped() % u"</p>\n"_s;
  }
  html += u"<div class=\"timeline\">"_s % QLatin1String(kTimelinePlaceholder) % u"</div>\n"_s;

  GenerationModel generations;
  generations.setDetail(shared);
  html += u"<h2>"_s % QObject::tr("Generations") % u"</h2>\n"_s %
          modelTableHtml(generations,
                         {GenerationModel::ColGeneration, GenerationModel::ColWhere, GenerationModel::ColStatus,
                          GenerationModel::ColResource, GenerationModel::ColCreated, GenerationModel::ColExecutions,
                          GenerationModel::ColReplays},
                         1000);
  EventModel events;
  events.setDetail(shared);
  html += u"<h2>"_s % QObject::tr("Events") % u"</h2>\n"_s %
          modelTableHtml(events,
                         {EventModel::ColAt, EventModel::ColOutcome, EventModel::ColGeneration, EventModel::ColStatus,
                          EventModel::ColRequest},
                         kMaxReportEvents);
  html += u"\n</body></html>\n"_s;
  return html;
}

}  // namespace idem::ui
