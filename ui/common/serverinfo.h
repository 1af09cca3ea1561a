#pragma once
// What the status bar and the views know about the open store, read once per connection.
#include <QMetaType>
#include <QString>
#include <QStringList>

namespace idem::ui {

struct ServerInfo {
  QString host;            ///< as libpq reports it (a socket folder for local connections)
  QString port;
  QString database;
  QString user;
  QString serverVersion;
  bool tls = false;        ///< the connection is encrypted (PQsslInUse)
  QString tlsProtocol;     ///< "TLSv1.3"
  QString sslmode;         ///< in effect: how far the server's certificate was checked
  bool readOnly = true;
  bool standby = false;    ///< pg_is_in_recovery(): reading from a hot standby
  int schemaVersion = 0;
  int expectedSchemaVersion = 0;
  int policyVersion = 0;   ///< newest row of idem.policies, 0 when none was recorded
  QString policyDocument;  ///< that policy's JSON (tiers and routes fill the filters)
  QStringList services;    ///< the services that share this store (schema 25 on), by name
  qint64 clockOffsetMs = 0;  ///< server now() minus local clock: relative times use DB time

  /// "10.0.3.7:5432" or "local socket:5432".
  [[nodiscard]] QString endpoint() const;
  /// A Unix socket (no TLS there, none needed): host is a folder or an abstract name.
  [[nodiscard]] bool localSocket() const;
  /// "TLS on (TLSv1.3, verify-full: certificate and host name verified)", "TLS off (local
  /// socket)", "TLS off" …
  [[nodiscard]] QString tlsSummary() const;
};

}  // namespace idem::ui

Q_DECLARE_METATYPE(idem::ui::ServerInfo)
