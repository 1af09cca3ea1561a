#pragma once
// Opens the chosen profile on every session the console uses (each has its own worker
// connection), keeps the password in memory only, and re-opens them on Retry or when a
// password is entered.
#include <QList>
#include <QObject>

#include "ui/common/connectparams.h"
#include "ui/connection/profile.h"

class QSettings;
class QWidget;

namespace idem::ui {

class DbSession;

class ConnectionController final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(ConnectionController)

 public:
  ConnectionController(QList<DbSession*> sessions, QSettings& settings, QObject* parent = nullptr);

  /// Connects every session with profile (password from .pgpass unless one is set).
  void connectProfile(const ConnectionProfile& profile, const QString& password = {});
  void retry();
  void setPassword(const QString& password);
  /// Shows the profile dialog; connects to the profile chosen. False when cancelled.
  bool editProfiles(QWidget* parent);

  [[nodiscard]] const ConnectionProfile& profile() const { return m_profile; }
  [[nodiscard]] const ConnectParams& params() const { return m_params; }

 signals:
  void profileChanged(const idem::ui::ConnectionProfile& profile);
  void paramsChanged(const idem::ui::ConnectParams& params);

 private:
  void open();

  QList<DbSession*> m_sessions;
  QSettings& m_settings;
  ConnectionProfile m_profile;
  ConnectParams m_params;
};

}  // namespace idem::ui
