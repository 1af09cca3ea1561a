#include "ui/connection/connectioncontroller.h"

#include <QSettings>

#include <stdexcept>

#include "ui/common/dbsession.h"
#include "ui/connection/connectiondialog.h"

namespace idem::ui {

ConnectionController::ConnectionController(QList<DbSession*> sessions, QSettings& settings, QObject* parent)
    : QObject(parent), m_sessions(std::move(sessions)), m_keyring(new Keyring(this)), m_settings(settings) {
  if (!m_sessions.isEmpty())
    connect(m_sessions.first(), &DbSession::stateChanged, this, &ConnectionController::sessionStateChanged);
  connect(m_keyring, &Keyring::lookedUp, this, [this](const QString& acct, const QString& password, const QString&) {
    // A keyring password for the connection still chosen, and none typed meanwhile.
    if (acct != account() || password.isEmpty() || !m_params.password.isEmpty()) return;
    m_params.password = password;
    open();
  });
  connect(m_keyring, &Keyring::remembered, this, [this](const QString&, bool ok, const QString& error) {
    emit keyringResult(ok, ok ? tr("The password is kept in the system keyring.")
                              : tr("The system keyring did not keep the password: %1").arg(error));
  });
  connect(m_keyring, &Keyring::forgotten, this, [this](const QString&, bool ok, const QString& error) {
    emit keyringResult(ok, ok ? tr("The password was removed from the system keyring.")
                              : tr("The system keyring did not remove the password: %1").arg(error));
  });
}

void ConnectionController::connectProfile(const ConnectionProfile& profile, const QString& password) {
  m_profile = profile;
  m_params.conninfo = profile.toConninfo();
  m_params.readOnly = profile.readOnly;
  m_params.password = password;
  m_keyringAskedFor.clear();
  m_rememberOnSuccess = false;
  emit profileChanged(profile);
  open();
}

void ConnectionController::retry() { open(); }

void ConnectionController::setPassword(const QString& password, bool remember) {
  m_params.password = password;
  m_rememberOnSuccess = remember && !password.isEmpty();
  open();
}

void ConnectionController::forgetPassword() { m_keyring->forget(account()); }

QString ConnectionController::account() const { return Keyring::accountFor(m_params.conninfo); }

void ConnectionController::sessionStateChanged() {
  const DbSession* session = m_sessions.first();
  if (session->state() == DbSession::State::Connected && m_rememberOnSuccess) {
    m_rememberOnSuccess = false;  // only a password the server accepted is kept
    m_keyring->remember(account(), m_params.password);
  }
  // The server wants a password and none was given: the keyring is asked once per profile
  // before the banner asks the user (~/.pgpass was already tried by libpq).
  if (session->state() == DbSession::State::Failed &&
      session->failure().kind == ConnectFailure::Kind::PasswordNeeded && m_params.password.isEmpty() &&
      m_keyringAskedFor != account()) {
    m_keyringAskedFor = account();
    m_keyring->lookup(account());
  }
}

void ConnectionController::open() {
  for (auto* s : m_sessions) s->open(m_params);
  emit paramsChanged(m_params);
}

bool ConnectionController::editProfiles(QWidget* parent) {
  ProfileStore store(m_settings);
  ConnectionDialog dialog(store.load(), m_profile.name.isEmpty() ? store.lastUsed() : m_profile.name, parent);
  const bool accepted = dialog.exec() == QDialog::Accepted;
  try {
    store.save(dialog.profiles());
  } catch (const std::invalid_argument&) {
    // Unreachable: the dialog does not close on a profile that cannot be saved. save() wrote
    // nothing, so the settings keep the profiles as they were.
  }
  if (!accepted) return false;
  const ConnectionProfile chosen = dialog.chosen();
  store.setLastUsed(chosen.name);
  connectProfile(chosen);
  return true;
}

}  // namespace idem::ui
