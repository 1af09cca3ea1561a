#pragma once
// Opens the chosen profile on every session the console uses (each has its own worker
// connection), and re-opens them on Retry or when a password is entered. A password is kept in
// memory, and in the system keyring only when the user asks; when the server wants one and
// none was given, the keyring is asked before the user is.
#include <QList>
#include <QObject>

#include "ui/common/connectparams.h"
#include "ui/connection/keyring.h"
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
  /// remember: store it in the system keyring once the server has accepted it.
  void setPassword(const QString& password, bool remember = false);
  /// Removes this connection's password from the system keyring.
  void forgetPassword();
  /// Shows the profile dialog; connects to the profile chosen. False when cancelled.
  bool editProfiles(QWidget* parent);

  [[nodiscard]] const ConnectionProfile& profile() const { return m_profile; }
  [[nodiscard]] const ConnectParams& params() const { return m_params; }

 signals:
  void profileChanged(const idem::ui::ConnectionProfile& profile);
  void paramsChanged(const idem::ui::ConnectParams& params);
  /// The keyring answered: ok false with a reason when it could not keep or remove the password.
  void keyringResult(bool ok, const QString& message);

 private:
  void open();
  void sessionStateChanged();
  [[nodiscard]] QString account() const;

  QList<DbSession*> m_sessions;
  Keyring* m_keyring;
  QString m_keyringAskedFor;  // the account already looked up since the profile was chosen
  bool m_rememberOnSuccess = false;
  QSettings& m_settings;
  ConnectionProfile m_profile;
  ConnectParams m_params;
};

}  // namespace idem::ui
