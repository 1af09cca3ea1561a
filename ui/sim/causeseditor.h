#pragma once
// Edits what makes a request run twice under different keys, and what catches it: clients
// that re-key their retries (agents, browsers), meant repeats of the same request, an
// intermediary that retries on its own, hedged copies, and the store's cross-key detection
// (mode and window). The Simulator's "Across keys" tab.
#include <QStringList>
#include <QWidget>

#include "core/sim/config.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace idem::ui::sim {

class DurationEdit;

class CausesEditor final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(CausesEditor)

 public:
  /// The intermediary choices, in the box's order.
  enum Mesh { NoMesh, Istio, EnvoyRetriable4xx, CustomMesh };

  explicit CausesEditor(QWidget* parent = nullptr);

  /// Shows config's causes across keys (the rest of it is ignored).
  void setConfig(const idem::sim::SimConfig& config);
  /// Writes these causes into config, leaving the rest of it as it was.
  void apply(idem::sim::SimConfig& config) const;
  [[nodiscard]] QStringList invalidFields() const;

  [[nodiscard]] QDoubleSpinBox* newKeyBox() const { return m_newKey; }
  [[nodiscard]] QComboBox* detectionBox() const { return m_mode; }
  [[nodiscard]] DurationEdit* windowEdit() const { return m_window; }
  [[nodiscard]] QComboBox* meshBox() const { return m_mesh; }
  [[nodiscard]] QCheckBox* hedgingBox() const { return m_hedge; }

 signals:
  void changed();

 private:
  void updateEnabled();

  QDoubleSpinBox* m_newKey;
  QDoubleSpinBox* m_sameBody;
  QComboBox* m_mode;
  DurationEdit* m_window;
  QComboBox* m_mesh;
  QSpinBox* m_meshRetries;
  QCheckBox* m_hedge;
  DurationEdit* m_hedgeDelay;
  QSpinBox* m_hedgeCopies;
  QCheckBox* m_hedge409;
  /// The intermediary a loaded scenario brought, kept whole while "custom" is chosen.
  idem::sim::Intermediary m_loadedMesh;
};

}  // namespace idem::ui::sim
