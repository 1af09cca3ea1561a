#include "ui/explain/letterhtml.h"

#include <QObject>

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

// QTextDocument reads a subset of CSS: margins per side and in px only (pt is ignored), no flex;
// the letterhead is a table.
const char* const kStyle = R"(
  @page { size: A4; margin: 20mm; }
  body { font-family: 'DejaVu Sans', sans-serif; font-size: 10.5pt; color: #111; }
  h1 { font-size: 13pt; margin-top: 28px; margin-bottom: 14px; }
  h2 { font-size: 11pt; margin-top: 16px; margin-bottom: 6px; }
  p { margin-top: 0px; margin-bottom: 10px; }
  .sender { font-size: 13pt; font-weight: bold; }
  .meta { color: #444; }
  .when { color: #444; white-space: nowrap; padding-right: 10pt; }
  .refs { color: #444; font-size: 9.5pt; }
)";

QString esc(const std::string& text) { return QString::fromStdString(text).toHtmlEscaped(); }

}  // namespace

QString letterHtml(const explain::Letter& l) {
  QString html = u"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"_s % esc(l.title) % u"</title><style>"_s %
                 QLatin1String(kStyle) % u"</style></head><body>\n"_s;
  // Letterhead: the sender on the left; the date and the ticket on the right.
  html += u"<table width=\"100%\" cellspacing=\"0\" cellpadding=\"0\"><tr><td class=\"sender\">"_s % esc(l.sender) %
          u"</td><td align=\"right\" class=\"meta\">"_s % esc(l.date);
  if (!l.reference.empty()) html += u"<br>"_s % esc(l.reference);
  html += u"</td></tr></table>\n"_s;
  html += u"<h1>"_s % esc(l.title) % u"</h1>\n"_s;
  html += u"<p>"_s % esc(l.greeting) % u"</p>\n<p>"_s % esc(l.summary) % u"</p>\n"_s;
  html += u"<h2>"_s % QObject::tr("What happened") % u"</h2>\n<table cellspacing=\"0\" cellpadding=\"2\">"_s;
  for (const auto& line : l.timeline)
    html += u"<tr><td class=\"when\" valign=\"top\" style=\"white-space: nowrap\">"_s % esc(line.when) %
            u"</td><td valign=\"top\">"_s % esc(line.text) % u"</td></tr>"_s;
  html += u"</table>\n<h2>"_s % QObject::tr("What we will do") % u"</h2>\n<p>"_s % esc(l.action) % u"</p>\n"_s;
  if (!l.advice.empty()) html += u"<p>"_s % esc(l.advice) % u"</p>\n"_s;
  if (!l.references.empty()) html += u"<p class=\"refs\">"_s % esc(l.references) % u"</p>\n"_s;
  html += u"<p><br>"_s % esc(l.closing) % u"</p>\n<p>"_s;
  for (std::size_t i = 0; i < l.signature.size(); ++i) html += (i ? u"<br>"_s : QString()) % esc(l.signature[i]);
  html += u"</p>\n</body></html>\n"_s;
  return html;
}

}  // namespace idem::ui
