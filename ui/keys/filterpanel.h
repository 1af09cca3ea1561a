#pragma once
// The key browser's filters. Edits are debounced, then filterChanged carries the new
// filter (state and sort are the workspace's business and are left as they were).
#include <QWidget>

#include "ui/keys/keyfilter.h"

class QCheckBox;
class QComboBox;
class QDateTimeEdit;
class QLineEdit;
class QTimer;

namespace idem::ui {

class FilterPanel final : public QWidget {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(FilterPanel)

 public:
  explicit FilterPanel(QWidget* parent = nullptr);

  /// The filter fields set in the panel, applied over base (state, sort).
  [[nodiscard]] KeyFilter apply(KeyFilter base) const;
  /// Shows filter's fields without emitting filterChanged.
  void setFilter(const KeyFilter& filter);
  /// Fills the endpoint and tier choices from the policy in force (JSON document).
  void setPolicy(const QString& policyJson);
  /// Fills the service choices (the services that share the store).
  void setServices(const QStringList& services);
  void clear();

 signals:
  void filterChanged();

 private:
  void changed();

  QComboBox* m_service;
  QComboBox* m_endpoint;
  QComboBox* m_tier;
  QLineEdit* m_tenant;
  QCheckBox* m_fromOn;
  QDateTimeEdit* m_from;
  QCheckBox* m_toOn;
  QDateTimeEdit* m_to;
  QComboBox* m_status;
  QLineEdit* m_key;
  QCheckBox* m_prefix;
  QLineEdit* m_resource;
  QCheckBox* m_multi;
  QCheckBox* m_stuck;
  QCheckBox* m_duplicates;
  QTimer* m_debounce;
  bool m_silent = false;
};

}  // namespace idem::ui
