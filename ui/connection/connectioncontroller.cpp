#include "ui/connection/connectioncontroller.h"

#include <QSettings>

#include "ui/common/dbsession.h"
#include "ui/connection/connectiondialog.h"

namespace idem::ui {

ConnectionController::ConnectionController(QList<DbSession*> sessions, QSettings& settings, QObject* parent)
    : QObject(parent), m_sessions(std::move(sessions)), m_settings(settings) {}

void ConnectionController::connectProfile(const ConnectionProfile& profile, const QString& password) {
  m_profile = profile;
  m_params.conninfo = profile.toConninfo();
  m_params.readOnly = profile.readOnly;
  m_params.password = password;
  emit profileChanged(profile);
  open();
}

void ConnectionController::retry() { open(); }

void ConnectionController::setPassword(const QString& password) {
  m_params.password = password;
  open();
}

void ConnectionController::open() {
  for (auto* s : m_sessions) s->open(m_params);
  emit paramsChanged(m_params);
}

bool ConnectionController::editProfiles(QWidget* parent) {
  ProfileStore store(m_settings);
  ConnectionDialog dialog(store.load(), m_profile.name.isEmpty() ? store.lastUsed() : m_profile.name, parent);
  if (dialog.exec() != QDialog::Accepted) {
    store.save(dialog.profiles());
    return false;
  }
  store.save(dialog.profiles());
  const ConnectionProfile chosen = dialog.chosen();
  store.setLastUsed(chosen.name);
  connectProfile(chosen);
  return true;
}

}  // namespace idem::ui
