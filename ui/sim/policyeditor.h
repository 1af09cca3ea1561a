#pragma once
// Edits one client retry policy: a preset (core's list: Stripe, AWS standard, gRPC, urllib3,
// Polly) fills every field; each field can then be changed. policy() gives the policy as the
// simulator runs it.
#include <QWidget>

#include "core/sim/config.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace idem::ui::sim {

class DurationEdit;

class PolicyEditor final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(PolicyEditor)

 public:
  explicit PolicyEditor(QWidget* parent = nullptr);

  /// Fills every field from core's preset called name ("stripe", "urllib3", …); false if unknown.
  bool applyPreset(const QString& name);
  void setPolicy(const idem::sim::Policy& policy);
  /// A policy fitted to what client (a User-Agent) was measured doing (the Measure tab): titled
  /// "Measured <client>" until a field changes.
  void setMeasuredPolicy(const idem::sim::Policy& policy, const QString& client);
  [[nodiscard]] idem::sim::Policy policy() const;
  /// "Stripe SDK" for a preset left as it is, "urllib3 (edited)" after changes, "Custom, no backoff".
  [[nodiscard]] QString title() const;
  /// The names of the fields whose text is not a valid value (empty when all are fine).
  [[nodiscard]] QStringList invalidFields() const;

  [[nodiscard]] QComboBox* presetBox() const { return m_preset; }
  [[nodiscard]] QSpinBox* maxAttemptsBox() const { return m_attempts; }
  [[nodiscard]] DurationEdit* timeoutEdit() const { return m_timeout; }
  [[nodiscard]] DurationEdit* capEdit() const { return m_cap; }

 signals:
  void changed();

 private:
  void edited();
  void updateEnabled();

  bool m_loading = false;
  bool m_edited = false;
  QString m_measuredFrom;  // the client a measured policy came from
  QComboBox* m_preset;
  QLabel* m_source;
  QSpinBox* m_attempts;
  DurationEdit* m_timeout;
  DurationEdit* m_deadline;
  QComboBox* m_backoff;
  QComboBox* m_jitter;
  DurationEdit* m_base;
  QDoubleSpinBox* m_multiplier;
  DurationEdit* m_cap;
  DurationEdit* m_minDelay;
  QCheckBox* m_firstImmediate;
  QCheckBox* m_retryTimeout;
  QCheckBox* m_retryConnection;
  QCheckBox* m_retry409;
  QCheckBox* m_retry500;
  QCheckBox* m_retry503;
  QComboBox* m_retryAfter;
  DurationEdit* m_retryAfterCap;
  QComboBox* m_overCap;
  QComboBox* m_budget;
  QDoubleSpinBox* m_maxTokens;
  QDoubleSpinBox* m_ratio;
  QDoubleSpinBox* m_retryCost;
  QDoubleSpinBox* m_timeoutCost;
  QDoubleSpinBox* m_successCredit;
  DurationEdit* m_window;
  QDoubleSpinBox* m_minRetries;
};

}  // namespace idem::ui::sim
