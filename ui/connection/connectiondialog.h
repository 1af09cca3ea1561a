#pragma once
// Manages the saved connection profiles and picks one to open. Passwords are never part
// of a profile: the dialog says where they come from instead.
#include <QDialog>

#include "ui/connection/profile.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QSpinBox;
class QStackedWidget;

namespace idem::ui {

class ConnectionDialog final : public QDialog {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ConnectionDialog)

 public:
  ConnectionDialog(QList<ConnectionProfile> profiles, const QString& current, QWidget* parent = nullptr);

  [[nodiscard]] QList<ConnectionProfile> profiles() const { return m_profiles; }
  /// The profile chosen with Connect.
  [[nodiscard]] ConnectionProfile chosen() const;

  /// Closes only when every profile can be saved: a connection string libpq cannot read is
  /// shown with the reason and kept open for correcting (it is never saved as it is).
  void done(int result) override;

 private:
  void showProfile(int row);
  void storeForm();
  void addProfile();
  void removeProfile();

  QList<ConnectionProfile> m_profiles;
  int m_row = -1;
  QListWidget* m_list;
  QLineEdit* m_name;
  QComboBox* m_kind;
  QStackedWidget* m_pages;
  QLineEdit* m_host;
  QSpinBox* m_port;
  QLineEdit* m_database;
  QLineEdit* m_user;
  QComboBox* m_sslmode;
  QLineEdit* m_conninfo;
  QLineEdit* m_service;
  QCheckBox* m_readOnly;
  QLabel* m_error;
};

}  // namespace idem::ui
