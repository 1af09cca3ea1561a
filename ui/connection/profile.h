#pragma once
// Connection profiles kept in QSettings. A profile is either separate fields (host, port,
// database, user, sslmode), a libpq conninfo/URI, or a pg_service.conf service name.
// Passwords are never stored here: libpq reads ~/.pgpass, then the system keyring is asked
// (keyring.h), else the console asks and keeps the password in memory for the session.
#include <QList>
#include <QString>

class QSettings;

namespace idem::ui {

struct ConnectionProfile {
  enum class Kind { Fields, Conninfo, Service };
  QString name;
  Kind kind = Kind::Fields;
  QString host;
  int port = 5432;
  QString database;
  QString user;
  QString sslmode;   ///< empty = libpq's default (prefer)
  QString conninfo;  ///< Kind::Conninfo: keywords or postgresql:// URI, never with a password
  QString service;   ///< Kind::Service
  bool readOnly = true;

  /// The libpq connection string this profile describes (no password).
  [[nodiscard]] QString toConninfo() const;
  /// "prod-replica (read-only)".
  [[nodiscard]] QString displayName() const;
  /// A profile for a --db argument: kind Conninfo, named after its target.
  [[nodiscard]] static ConnectionProfile fromConninfo(const QString& conninfo);
  bool operator==(const ConnectionProfile&) const = default;
};

/// Reads and writes profiles under the "profiles" group; the last used one by name.
class ProfileStore final {
 public:
  explicit ProfileStore(QSettings& settings) : m_settings(settings) {}
  [[nodiscard]] QList<ConnectionProfile> load() const;
  /// Saves all profiles; any password inside a conninfo is removed first.
  void save(const QList<ConnectionProfile>& profiles);
  [[nodiscard]] QString lastUsed() const;
  void setLastUsed(const QString& name);

 private:
  QSettings& m_settings;
};

}  // namespace idem::ui
