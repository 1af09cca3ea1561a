#pragma once
// What the status bar and the views know about the open store, read once per connection.
#include <QMetaType>
#include <QString>

namespace idem::ui {

struct ServerInfo {
  QString host;            ///< as libpq reports it (a socket folder for local connections)
  QString port;
  QString database;
  QString user;
  QString serverVersion;
  bool readOnly = true;
  bool standby = false;    ///< pg_is_in_recovery(): reading from a hot standby
  int schemaVersion = 0;
  int expectedSchemaVersion = 0;
  int policyVersion = 0;   ///< newest row of idem.policies, 0 when none was recorded
  QString policyDocument;  ///< that policy's JSON (tiers and routes fill the filters)
  qint64 clockOffsetMs = 0;  ///< server now() minus local clock: relative times use DB time

  /// "10.0.3.7:5432" or "local socket:5432".
  [[nodiscard]] QString endpoint() const;
};

}  // namespace idem::ui

Q_DECLARE_METATYPE(idem::ui::ServerInfo)
