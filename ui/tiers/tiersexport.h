#pragma once
// Exports of the Tiers workspace: the chart as PNG or SVG, and a one-page PDF that puts the
// policy in force next to the proposed one for a decision meeting.
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

struct DecisionSheet {
  tiers::Report report;
  /// The proposed what-if per tier (what the panel shows; the recommendation by default).
  std::function<tiers::WhatIf(const std::string& tier)> proposal;
  QString database;  ///< "idem on 10.0.3.7:5432", for the header
};

/// One A4 landscape page: header, current vs proposed per tier, the reasons, the chart.
bool writeDecisionPdf(const DecisionSheet& sheet, QGraphicsView* chart, const QString& path);
/// The sheet's text part as HTML (also what the PDF lays out).
[[nodiscard]] QString decisionHtml(const DecisionSheet& sheet);

}  // namespace idem::ui
