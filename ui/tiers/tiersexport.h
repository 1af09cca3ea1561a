#pragma once
// Exports of the Tiers workspace: the chart as PNG or SVG, and a one-page PDF that puts the
// policy in force next to the proposed one for a decision meeting.
#include <QPicture>
#include <QSizeF>
#include <QString>
#include <functional>
#include <string>

#include "core/tiers/tiers.h"

class QGraphicsView;

namespace idem::ui {

/// Renders a chart view into a PNG at twice its on-screen resolution. False on failure.
bool saveChartPng(QGraphicsView* chart, const QString& path);
/// Renders a chart view into an SVG (vector) with title as the document's title.
bool saveChartSvg(QGraphicsView* chart, const QString& path, const QString& title);

/// Everything the one-page sheet shows, as values: made on the GUI thread, written on any.
struct DecisionSheet {
  tiers::Report report;
  /// The proposed what-if per tier (what the panel shows; the recommendation by default).
  /// Called on the thread that writes the sheet: it must hold values, not widgets.
  std::function<tiers::WhatIf(const std::string& tier)> proposal;
  QString database;  ///< "idem on 10.0.3.7:5432", for the header
  QPicture chart;    ///< the chart as drawn on screen (recordChart); empty: no chart
  QSizeF chartSize;
};

/// Records the chart view into sheet (GUI thread: a widget draws only there).
void recordChart(QGraphicsView* chart, DecisionSheet& sheet);
/// One A4 landscape page: header, current vs proposed per tier, the reasons, the chart. Any
/// thread (QPainter on a QPdfWriter and QTextDocument are supported off the GUI thread).
bool writeDecisionPdf(const DecisionSheet& sheet, const QString& path);
/// The sheet's text part as HTML (also what the PDF lays out).
[[nodiscard]] QString decisionHtml(const DecisionSheet& sheet);

}  // namespace idem::ui
