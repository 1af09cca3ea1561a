#include "ui/common/connectfailure.h"

#include <QCoreApplication>

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("ConnectFailure", text); }

ConnectFailure make(ConnectFailure::Kind kind, QString what, QString means, QString todo, QString detail) {
  return ConnectFailure{kind, std::move(what), std::move(means), std::move(todo), std::move(detail)};
}

bool has(const QString& message, const char* needle) { return message.contains(QLatin1String(needle), Qt::CaseInsensitive); }

}  // namespace

QString ConnectFailure::toHtml() const {
  QString html = u"<p><b>"_s % what.toHtmlEscaped() % u"</b></p><p>"_s % means.toHtmlEscaped() % u"</p><p>"_s %
                 todo.toHtmlEscaped() % u"</p>"_s;
  if (!detail.isEmpty())
    html += u"<p style='color:#666'>"_s % tr("Server said:").toHtmlEscaped() % u" <tt>"_s % detail.toHtmlEscaped() %
            u"</tt></p>"_s;
  return html;
}

QString ConnectFailure::toPlainText() const {
  QString text = what % u"\n"_s % means % u"\n"_s % todo;
  if (!detail.isEmpty()) text += u"\n"_s % tr("Server said:") % u" "_s % detail;
  return text;
}

ConnectFailure classifyConnectError(const QString& raw, const QString& target, bool passwordGiven) {
  using K = ConnectFailure::Kind;
  const QString message = raw.trimmed();
  if (has(message, "invalid connection option") || has(message, "invalid URI") || has(message, "missing \"=\"") ||
      has(message, "unterminated quoted string") || has(message, "definition of service"))
    return make(K::BadConninfo, tr("The connection settings cannot be read."),
                tr("The profile's connection string or service name is not valid, so no connection was attempted."),
                tr("Edit the profile: use libpq keywords (host=… dbname=…), a postgresql:// URI, or an existing "
                   "service name from pg_service.conf."),
                message);
  if (has(message, "no password supplied") || (has(message, "password authentication failed") && !passwordGiven))
    return make(K::PasswordNeeded, tr("The server asks for a password."),
                tr("No password was found in ~/.pgpass, PGPASSWORD or the system keyring for %1.").arg(target),
                tr("Enter the password (kept in memory, or in the system keyring if you tick Remember), or "
                   "add a line to ~/.pgpass."),
                message);
  if (has(message, "password authentication failed") || has(message, "authentication failed"))
    return make(K::WrongPassword, tr("The password was not accepted."),
                tr("The server rejected the password for this user, so the console is not connected."),
                tr("Check the user name and enter the password again; if it is in ~/.pgpass, correct it there."),
                message);
  if (has(message, "database") && has(message, "does not exist"))
    return make(K::NoSuchDatabase, tr("That database does not exist on the server."),
                tr("The server at %1 is reachable, but it has no database by that name.").arg(target),
                tr("Check the database name in the profile (Idem's store is usually named \"idem\")."), message);
  if (has(message, "role") && has(message, "does not exist"))
    return make(K::NoSuchRole, tr("That user does not exist on the server."),
                tr("The server is reachable, but it knows no role by that name."),
                tr("Check the user name in the profile; support staff usually connect as a member of idem_console."),
                message);
  if (has(message, "pg_hba.conf"))
    return make(K::NotAllowed, tr("The server does not accept connections from here for this user."),
                tr("Its access rules (pg_hba.conf) have no entry for this host, user and database."),
                tr("Ask the database administrator to allow this user, or connect through the host they name."),
                message);
  if (has(message, "SSL") || has(message, "certificate"))
    return make(K::Ssl, tr("The encrypted connection could not be set up."),
                tr("The server and the profile disagree about SSL (sslmode) or a certificate was not accepted."),
                tr("A network host is verify-full unless the profile chooses an sslmode: that needs the server's CA "
                   "certificate in ~/.postgresql/root.crt (or sslrootcert=… in the profile). sslmode=require encrypts "
                   "without checking who answers."),
                message);
  if (has(message, "could not translate host name") || has(message, "Connection refused") ||
      has(message, "No such file or directory") || has(message, "timeout expired") ||
      has(message, "No route to host") || has(message, "Network is unreachable") ||
      has(message, "could not connect") || has(message, "Connection timed out") ||
      has(message, "the database system is starting up") || has(message, "shutting down"))
    return make(K::Host, tr("The database server cannot be reached."),
                tr("Nothing answered at %1: the host or port may be wrong, or the server is down.").arg(target),
                tr("Check host and port in the profile. The console keeps trying by itself every few seconds."),
                message);
  return make(K::Other, tr("The connection failed."), tr("PostgreSQL refused or dropped the connection."),
              tr("Read the server's message below; try again, or edit the profile."), message);
}

ConnectFailure classifySchema(int applied, int expected, const QString& database) {
  using K = ConnectFailure::Kind;
  if (applied <= 0)
    return make(K::NoSchema, tr("This database has no Idem store."),
                tr("Database \"%1\" is reachable but has no idem schema, so there are no keys to browse.").arg(database),
                tr("Connect to the database your Idem service uses, or create the store with `idemctl migrate "
                   "--db …`."),
                {});
  if (applied < expected)
    return make(K::SchemaOlder, tr("The store's schema is older than this console."),
                tr("The store is at schema version %1; this console needs version %2 and could show wrong data.")
                    .arg(applied)
                    .arg(expected),
                tr("Ask an administrator to run `idemctl migrate` against this database, then reconnect."), {});
  if (applied > expected)
    return make(K::SchemaNewer, tr("The store's schema is newer than this console."),
                tr("The store is at schema version %1; this console knows up to %2. Some details may be missing.")
                    .arg(applied)
                    .arg(expected),
                tr("Update idem-console when you can."), {});
  return {};
}

ConnectFailure permissionFailure(const QString& user, const QString& detail) {
  return make(ConnectFailure::Kind::Permission, tr("This user may not read Idem's tables."),
              tr("User \"%1\" is connected but lacks SELECT on the idem schema.").arg(user),
              tr("Ask an administrator to GRANT idem_console TO \"%1\", or connect as a console user.").arg(user),
              detail);
}

ConnectFailure lostFailure(const QString& detail) {
  return make(ConnectFailure::Kind::Lost, tr("The connection to the database was lost."),
              tr("What is on screen may be out of date; nothing was changed."),
              tr("The console reconnects by itself; wait a moment or press Retry."), detail);
}

}  // namespace idem::ui
