#pragma once
// What a worker needs to open its own connection: the profile's conninfo, a password kept
// in memory only, and whether the session is read-only.
#include <QString>

namespace idem::ui {

struct ConnectParams {
  QString conninfo;       ///< libpq keywords, a postgresql:// URI, or "service=NAME"
  QString password;       ///< in memory only; empty = let libpq use .pgpass / PGPASSWORD
  bool readOnly = true;   ///< SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY
  int connectTimeoutS = 5;

  /// The libpq keyword string for a connection: the profile's conninfo (URIs expanded),
  /// then the password, application_name and connect_timeout unless the profile set them,
  /// and sslmode=verify-full when it names a network host without choosing an sslmode
  /// (defaultSslmode). Throws std::invalid_argument with libpq's message (quoted fragments,
  /// which may be a secret, left out) when the conninfo does not parse.
  [[nodiscard]] std::string toLibpq() const;

  /// Whether libpq holds `keyword`'s value secret (password, sslpassword, any later one).
  [[nodiscard]] static bool isSecretKeyword(const QString& keyword);
  /// The conninfo as libpq keywords without any secret, for settings. Throws
  /// std::invalid_argument when libpq cannot parse it: a string that cannot be read cannot be
  /// cleaned, so it is never stored.
  [[nodiscard]] static QString withoutSecrets(const QString& conninfo);
  /// For display and the keyring's account name: withoutSecrets, or a placeholder.
  [[nodiscard]] static QString forDisplay(const QString& conninfo);
  /// The sslmode the console adds to a conninfo that chose none: "verify-full" when it
  /// reaches a network host (TCP), "" for a Unix socket, a service (its file decides) or when
  /// PGSSLMODE is set. Unparseable: "".
  [[nodiscard]] static QString defaultSslmode(const QString& conninfo);
};

/// Quotes a value for a libpq keyword string: 'it''s' style escaping with backslashes.
[[nodiscard]] QString quoteConninfoValue(const QString& value);

}  // namespace idem::ui
