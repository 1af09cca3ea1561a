#pragma once
// The system keyring (the Secret Service on Linux, through QtKeychain): the one place the
// console may keep a database password between runs — never its settings, never plain text
// (QtKeychain's insecure fallback stays off). Every call is asynchronous: the GUI thread never
// waits on D-Bus.
#include <QObject>
#include <QString>

namespace idem::ui {

class Keyring final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(Keyring)

 public:
  explicit Keyring(QObject* parent = nullptr);

  /// The keyring entry of a connection: its conninfo without any secret, so one entry stands
  /// for one server, database and user (the Secret Service keeps account names in clear).
  [[nodiscard]] static QString accountFor(const QString& conninfo);

  void lookup(const QString& account);
  void remember(const QString& account, const QString& password);
  void forget(const QString& account);

 signals:
  /// password is empty when the keyring holds none for the account (or cannot be reached:
  /// then error says why).
  void lookedUp(const QString& account, const QString& password, const QString& error);
  void remembered(const QString& account, bool ok, const QString& error);
  void forgotten(const QString& account, bool ok, const QString& error);
};

}  // namespace idem::ui
