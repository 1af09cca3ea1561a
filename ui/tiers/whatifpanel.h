#pragma once
// The what-if panel: pick a tier and a TTL (log slider over round durations, or a typed
// value), read what the trace says that TTL would have meant — retries after expiry, duplicates
// (or rejections) per million operations, storage — against the TTL in force, with the curves
// and the recommendation. Slider positions are points the report already computed, so moving
// it needs no query; a typed TTL between them is asked of the database (whatIfRequested).
// A shorter body retention can be proposed too: the archive keeps its rows, and the storage
// figures lose the stored bodies archived longer ago (measured per age, no query either).
#include <QWidget>
#include <map>
#include <string>

#include "core/tiers/tiers.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;

namespace idem::ui {

class CurveChart;

class WhatIfPanel final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(WhatIfPanel)

 public:
  explicit WhatIfPanel(QWidget* parent = nullptr);

  /// New numbers: every tier's proposal goes back to its recommendation.
  void setReport(const tiers::Report& report);
  void setTier(const QString& name);
  /// Proposes ttl for the tier shown (from the curve, or by asking the database).
  void setTtl(tiers::Millis ttl);
  /// The database's answer to whatIfRequested.
  void setWhatIf(const QString& tier, const tiers::WhatIf& whatIf);

  [[nodiscard]] QString currentTier() const;
  [[nodiscard]] const tiers::TierReport* tier() const;
  /// What is proposed for a tier (its recommendation until someone moves the TTL).
  [[nodiscard]] tiers::WhatIf proposal(const std::string& tier) const;
  [[nodiscard]] QSlider* slider() const { return m_slider; }
  [[nodiscard]] QLineEdit* ttlEdit() const { return m_typed; }
  [[nodiscard]] QComboBox* bodyRetentionBox() const { return m_bodyBox; }
  [[nodiscard]] QComboBox* tierBox() const { return m_tierBox; }
  [[nodiscard]] QPushButton* useRecommendedButton() const { return m_useRecommended; }
  [[nodiscard]] CurveChart* missChart() const { return m_missChart; }
  [[nodiscard]] CurveChart* storageChart() const { return m_storageChart; }
  /// The figures as shown, one line each (for tests and the status bar).
  [[nodiscard]] QString summary() const;

 signals:
  void whatIfRequested(const QString& tier, qint64 ttlMs);
  void proposalChanged();

 private:
  void tierChosen(int index);
  void sliderMoved(int position);
  void typed();
  void bodyRetentionChosen(int index);
  /// w with the body retention chosen for the tier shown (storage adjusted), or as it is.
  [[nodiscard]] tiers::WhatIf withBodies(tiers::WhatIf w) const;
  /// What the chosen body retention takes off the archive (0 or negative).
  [[nodiscard]] double bodyDelta() const;
  void show(const tiers::WhatIf& w);
  void fillCurves(tiers::Millis candidate);
  void fitControls();
  void resizeEvent(QResizeEvent* event) override;

  tiers::Report m_report;
  std::map<std::string, tiers::WhatIf> m_proposals;
  QWidget* m_controls = nullptr;
  QComboBox* m_tierBox;
  QSlider* m_slider;
  QLineEdit* m_typed;
  QComboBox* m_bodyBox;
  QLabel* m_context;
  QLabel* m_miss;
  QLabel* m_perMillion;
  QLabel* m_storage;
  QLabel* m_recommendation;
  QLabel* m_rule;
  QPushButton* m_useRecommended;
  QPushButton* m_useCurrent;
  CurveChart* m_missChart;
  CurveChart* m_storageChart;
};

}  // namespace idem::ui
