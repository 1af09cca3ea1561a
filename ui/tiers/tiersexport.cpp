#include "ui/tiers/tiersexport.h"

#include <QAbstractTextDocumentLayout>
#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QGraphicsView>
#include <QImage>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QTextDocument>

#include "core/policy/duration.h"
#include "ui/common/timefmt.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
using tiers::Millis;
namespace {

QString tr(const char* s) { return QCoreApplication::translate("TiersExport", s); }
QString q(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }
QString dur(Millis d) { return formatDuration(d.count()); }

QString cellPair(const QString& now, const QString& proposed, bool changed) {
  return changed ? now % u" → <b>"_s % proposed % u"</b>"_s : now;
}

}  // namespace

bool saveChartPng(QGraphicsView* chart, const QString& path) {
  const QSize size = chart->viewport()->size();
  if (size.isEmpty()) return false;
  QImage image(size * 2, QImage::Format_ARGB32);
  image.setDevicePixelRatio(2);
  image.fill(Qt::white);
  {
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    chart->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), chart->viewport()->rect());
  }
  return image.save(path, "PNG");
}

bool saveChartSvg(QGraphicsView* chart, const QString& path, const QString& title) {
  const QSize size = chart->viewport()->size();
  if (size.isEmpty()) return false;
  QSvgGenerator svg;
  svg.setFileName(path);
  svg.setSize(size);
  svg.setViewBox(QRect(QPoint(0, 0), size));
  svg.setTitle(title);
  svg.setDescription(tr("Exported from the Idem console"));
  QPainter painter;
  if (!painter.begin(&svg)) return false;
  painter.setRenderHint(QPainter::Antialiasing);
  chart->render(&painter, QRectF(QPointF(0, 0), QSizeF(size)), chart->viewport()->rect());
  return painter.end();
}

QString decisionHtml(const DecisionSheet& sheet) {
  const auto& r = sheet.report;
  QString html;
  html += u"<h2 style='margin:0'>"_s % tr("Retention tiers: the policy in force and the proposal") % u"</h2>"_s;
  html += u"<p style='color:#555'>"_s %
          tr("Policy v%1 · retries observed over the last %2 up to %3 · %4")
              .arg(r.policyVersion)
              .arg(dur(r.since), formatAbsolute(QDateTime::fromMSecsSinceEpoch(r.generatedAtMs, Qt::UTC)),
                   sheet.database.toHtmlEscaped()) %
          u"</p>"_s;
  html += u"<table border='1' cellspacing='0' cellpadding='4' width='100%' style='border-collapse:collapse'>"_s;
  html += u"<tr style='background:#eef2f7'><th align='left'>"_s % tr("Tier") % u"</th><th align='left'>"_s %
          tr("TTL now → proposed") % u"</th><th align='left'>"_s % tr("Retries after expiry") %
          u"</th><th align='left'>"_s % tr("Per million operations") % u"</th><th align='left'>"_s % tr("Storage") %
          u"</th><th align='left'>"_s % tr("Observed retries (p50 / p99 / max)") % u"</th><th align='left'>"_s %
          tr("Reference windows") % u"</th></tr>"_s;
  for (const auto& t : r.tiers) {
    const auto p = sheet.proposal ? sheet.proposal(t.tier.name) : t.proposed;
    const bool changed = p.ttl != t.current.ttl;
    const bool execute = t.tier.onExpired == policy::OnExpired::Execute;
    QString observed = tr("none");
    if (const auto& o = t.retries.offsets)
      observed = formatDuration(static_cast<qint64>(o->p50)) % u" / "_s % formatDuration(static_cast<qint64>(o->p99)) %
                 u" / "_s % formatDuration(static_cast<qint64>(o->max));
    QStringList windows;
    for (const auto& [name, w] : t.tier.referenceWindows) windows << q(name) % u" "_s % dur(w);
    html += u"<tr><td><b>"_s % q(t.tier.name) % u"</b>"_s %
            (t.flagged() ? u" <span style='color:#c01cb0'>⚠</span>"_s : QString()) % u"<br><small>"_s %
            (execute ? tr("expired keys execute again") : tr("expired keys are rejected")) % u"</small></td><td>"_s %
            cellPair(dur(t.current.ttl), dur(p.ttl), changed) % u"</td><td>"_s %
            cellPair(q(tiers::humanPercentRange(t.current.missRateRange)), q(tiers::humanPercentRange(p.missRateRange)), changed) %
            u"</td><td>"_s %
            cellPair(q(tiers::humanPerMillionRange(t.current.perMillionRange)), q(tiers::humanPerMillionRange(p.perMillionRange)),
                     changed) %
            u" "_s % (execute ? tr("duplicates") : tr("rejections")) % u"</td><td>"_s %
            cellPair(q(tiers::humanBytes(t.current.storageBytes)), q(tiers::humanBytes(p.storageBytes)),
                     changed || p.bodyRetention.has_value()) %
            (p.bodyRetention ? u"<br><small>"_s % tr("response bodies kept %1").arg(dur(*p.bodyRetention)) %
                                   u"</small>"_s
                             : QString()) %
            u"</td><td>"_s % observed % u"</td><td>"_s % (windows.isEmpty() ? u"—"_s : windows.join(u", "_s)) %
            u"</td></tr>"_s;
  }
  html += u"</table>"_s;
  QString reasons;
  for (const auto& t : r.tiers) {
    for (const auto& f : t.flags) reasons += u"<li><b>"_s % q(t.tier.name) % u":</b> "_s % q(f) % u"</li>"_s;
    const auto p = sheet.proposal ? sheet.proposal(t.tier.name) : t.proposed;
    if (p.exposed())
      reasons += u"<li><b>"_s % q(t.tier.name) % u":</b> "_s %
                 tr("known exposure at %1: %2.").arg(dur(p.ttl), q(tiers::exposureText(p))) % u"</li>"_s;
    reasons += u"<li><b>"_s % q(t.tier.name) % u"</b> "_s %
               (t.recommendation.made ? tr("recommended %1: %2.").arg(dur(t.recommendation.ttl), q(t.recommendation.because))
                                      : tr("no recommendation: %1.").arg(q(t.recommendation.because))) %
               u"</li>"_s;
  }
  html += u"<ul style='margin-top:4px'>"_s % reasons % u"</ul>"_s;
  html += u"<p style='color:#777'><small>"_s %
          tr("A retry's offset is measured from its key's first request (a retry that found the key expired, from "
             "the first generation). \"After expiry\" counts the retries of the period at or past the TTL; under "
             "on_expired execute each is a duplicate execution. Storage is live rows × their measured size on disk "
             "(indexes included), scaled by the TTL, plus the archive.") %
          u" "_s % q(tiers::confidenceRule()) %
          u"</small></p>"_s;
  return html;
}

void recordChart(QGraphicsView* chart, DecisionSheet& sheet) {
  if (!chart) return;
  const QRect source = chart->viewport()->rect();
  QPainter painter(&sheet.chart);
  chart->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
  painter.end();
  sheet.chartSize = source.size();
}

bool writeDecisionPdf(const DecisionSheet& sheet, const QString& path) {
  QPdfWriter pdf(path);
  pdf.setPageSize(QPageSize(QPageSize::A4));
  pdf.setPageOrientation(QPageLayout::Landscape);
  pdf.setPageMargins(QMarginsF(12, 10, 12, 10), QPageLayout::Millimeter);
  pdf.setResolution(144);
  pdf.setTitle(tr("Retention tiers — policy v%1").arg(sheet.report.policyVersion));
  pdf.setCreator(u"Idem console"_s);
  QPainter painter;
  if (!painter.begin(&pdf)) return false;
  painter.setRenderHint(QPainter::Antialiasing);
  const QRect page = pdf.pageLayout().paintRectPixels(pdf.resolution()).translated(
      -pdf.pageLayout().paintRectPixels(pdf.resolution()).topLeft());

  QTextDocument doc;
  doc.documentLayout()->setPaintDevice(&pdf);
  QFont font = doc.defaultFont();
  font.setPointSizeF(8.5);
  doc.setDefaultFont(font);
  doc.setHtml(decisionHtml(sheet));
  doc.setTextWidth(page.width());
  // The chart takes what the text leaves, at most half the page: one page whatever the tiers.
  const double textHeight = doc.size().height();
  double chartTop = textHeight + 8;
  double chartHeight = page.height() - chartTop;
  if (chartHeight < page.height() * 0.35) {
    const double squeeze = (page.height() * 0.65) / textHeight;
    painter.save();
    painter.scale(squeeze, squeeze);
    doc.drawContents(&painter);
    painter.restore();
    chartTop = page.height() * 0.65 + 8;
    chartHeight = page.height() - chartTop;
  } else {
    doc.drawContents(&painter);
  }
  const QSizeF source = sheet.chartSize;
  if (!sheet.chart.isNull() && source.width() > 0 && source.height() > 0 && chartHeight > 40) {
    QRectF target(0, chartTop, page.width(), chartHeight);
    const double aspect = source.width() / source.height();
    if (target.width() / target.height() > aspect) target.setWidth(target.height() * aspect);
    else target.setHeight(target.width() / aspect);
    target.moveLeft((page.width() - target.width()) / 2);
    painter.save();
    painter.translate(target.topLeft());
    painter.scale(target.width() / source.width(), target.height() / source.height());
    painter.drawPicture(0, 0, sheet.chart);
    painter.restore();
  }
  return painter.end();
}

}  // namespace idem::ui
