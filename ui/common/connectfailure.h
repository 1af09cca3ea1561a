#pragma once
// Turns what libpq and the schema check say into a message a support agent can act on:
// what happened, what it means, what to do next (never a raw libpq message alone: docs/design.md §7).
#include <QString>

namespace idem::ui {

struct ConnectFailure {
  enum class Kind {
    None,
    Host,            ///< server unreachable: wrong host/port, server down, network
    PasswordNeeded,  ///< the server asks for a password and none was given
    WrongPassword,   ///< authentication failed
    NoSuchDatabase,
    NoSuchRole,
    NotAllowed,      ///< pg_hba.conf rejects this host/user/database
    Ssl,
    BadConninfo,     ///< the profile's connection string does not parse
    NoSchema,        ///< connected, but the database has no Idem schema
    SchemaOlder,     ///< the schema is older than this console expects
    SchemaNewer,     ///< the schema is newer (warning only: the console still opens it)
    Permission,      ///< the role may not read Idem's tables
    Lost,            ///< an open connection broke
    Other,
  };
  Kind kind = Kind::None;
  QString what;
  QString means;
  QString todo;
  QString detail;  ///< the server's own words, shown under the explanation

  [[nodiscard]] bool isError() const { return kind != Kind::None && kind != Kind::SchemaNewer; }
  /// True when trying again later may succeed without the user changing anything.
  [[nodiscard]] bool isTransient() const { return kind == Kind::Host || kind == Kind::Lost || kind == Kind::Other; }
  /// The three parts as one paragraph-per-part rich text for a banner or dialog.
  [[nodiscard]] QString toHtml() const;
  [[nodiscard]] QString toPlainText() const;
};

/// Classifies libpq's connection error message (English server and client messages).
[[nodiscard]] ConnectFailure classifyConnectError(const QString& libpqMessage, const QString& target,
                                                  bool passwordGiven);
/// The schema check's verdict: applied = 0 means no Idem schema.
[[nodiscard]] ConnectFailure classifySchema(int applied, int expected, const QString& database);
/// A query failed for lack of privilege (SQLSTATE 42501).
[[nodiscard]] ConnectFailure permissionFailure(const QString& user, const QString& detail);
/// An open connection broke; the console reconnects by itself.
[[nodiscard]] ConnectFailure lostFailure(const QString& detail);

}  // namespace idem::ui
