#pragma once
// Connection profiles kept in QSettings. A profile is either separate fields (host, port,
// database, user, sslmode), a libpq conninfo/URI, or a pg_service.conf service name.
// No secret is ever stored here (password, sslpassword — every keyword libpq holds secret):
// libpq reads ~/.pgpass, then the system keyring is asked (keyring.h), else the console asks
// and keeps the password in memory for the session. A connection string libpq cannot read is
// refused rather than stored: it cannot be cleaned of a password it may hold.
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
  QString sslmode;   ///< empty = verify-full for a network host, as libpq has it for a socket
  QString conninfo;  ///< Kind::Conninfo: keywords or postgresql:// URI; saved without secrets
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

/// Why `p` cannot be saved (its connection string does not parse), or "" when it can. The
/// message names the profile and never quotes the string.
[[nodiscard]] QString profileProblem(const ConnectionProfile& p);

/// Reads and writes profiles under the "profiles" group; the last used one by name.
class ProfileStore final {
 public:
  explicit ProfileStore(QSettings& settings) : m_settings(settings) {}
  [[nodiscard]] QList<ConnectionProfile> load() const;
  /// Saves all profiles, every secret removed from their connection strings first. Throws
  /// std::invalid_argument (profileProblem's message) with nothing written when a profile's
  /// connection string does not parse.
  void save(const QList<ConnectionProfile>& profiles);
  [[nodiscard]] QString lastUsed() const;
  void setLastUsed(const QString& name);

 private:
  QSettings& m_settings;
};

}  // namespace idem::ui
