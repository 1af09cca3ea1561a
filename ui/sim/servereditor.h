#pragma once
// Edits everything of a simulation except the client policy: the client population (operations,
// arrival rate, seed), the server (latency median/p99, failures, capacity, one spike/outage
// event) and the key store (TTL, lease, purge lag, stored_at).
#include <QWidget>

#include "core/sim/config.h"

class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace idem::ui::sim {

class DurationEdit;

class ServerEditor final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ServerEditor)

 public:
  enum EventKind { NoEvent, Spike, Outage, FailureWindow };

  explicit ServerEditor(QWidget* parent = nullptr);

  /// Shows config's clients, server and store (its policy is ignored; only its first event is shown).
  void setConfig(const idem::sim::SimConfig& config);
  /// A config with these settings and the given policy.
  [[nodiscard]] idem::sim::SimConfig config(const idem::sim::Policy& policy) const;
  [[nodiscard]] QStringList invalidFields() const;

  [[nodiscard]] DurationEdit* ttlEdit() const { return m_ttl; }
  [[nodiscard]] QSpinBox* operationsBox() const { return m_operations; }
  [[nodiscard]] QComboBox* eventBox() const { return m_event; }

 signals:
  void changed();

 private:
  void updateEnabled();

  QSpinBox* m_seed;
  QSpinBox* m_operations;
  QDoubleSpinBox* m_rate;
  DurationEdit* m_median;
  DurationEdit* m_p99;
  QDoubleSpinBox* m_failure;
  QComboBox* m_failureStatus;
  QDoubleSpinBox* m_connectionErrors;
  QDoubleSpinBox* m_lost;
  QDoubleSpinBox* m_capacity;
  DurationEdit* m_retryAfter;
  DurationEdit* m_conflictRetryAfter;
  QComboBox* m_event;
  DurationEdit* m_eventAt;
  DurationEdit* m_eventDuration;
  QDoubleSpinBox* m_extraRate;
  QDoubleSpinBox* m_outageFraction;
  QComboBox* m_outageAnswer;
  DurationEdit* m_eventRetryAfter;
  QDoubleSpinBox* m_eventFailure;
  DurationEdit* m_ttl;
  DurationEdit* m_lease;
  DurationEdit* m_purgeLag;
  QComboBox* m_storedAt;
};

}  // namespace idem::ui::sim
