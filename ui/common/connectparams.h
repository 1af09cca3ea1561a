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
  /// then the password, application_name and connect_timeout unless the profile set them.
  /// Throws std::invalid_argument with libpq's message when the conninfo does not parse.
  [[nodiscard]] std::string toLibpq() const;
  /// The conninfo with any password removed, for display and for settings.
  [[nodiscard]] static QString withoutPassword(const QString& conninfo);
};

/// Quotes a value for a libpq keyword string: 'it''s' style escaping with backslashes.
[[nodiscard]] QString quoteConninfoValue(const QString& value);

}  // namespace idem::ui
