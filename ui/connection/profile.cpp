#include "ui/connection/profile.h"

#include <QSettings>
#include <QStringList>

#include <libpq-fe.h>

#include <memory>
#include <stdexcept>

#include "ui/common/connectparams.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

QString ConnectionProfile::toConninfo() const {
  switch (kind) {
    case Kind::Conninfo: return conninfo;  // in memory as typed; ProfileStore::save strips secrets
    case Kind::Service: return u"service="_s % quoteConninfoValue(service);
    case Kind::Fields: break;
  }
  QStringList parts;
  if (!host.isEmpty()) parts << u"host="_s % quoteConninfoValue(host);
  if (port > 0) parts << u"port="_s % QString::number(port);
  if (!database.isEmpty()) parts << u"dbname="_s % quoteConninfoValue(database);
  if (!user.isEmpty()) parts << u"user="_s % quoteConninfoValue(user);
  if (!sslmode.isEmpty()) parts << u"sslmode="_s % quoteConninfoValue(sslmode);
  return parts.join(u' ');
}

QString ConnectionProfile::displayName() const {
  return readOnly ? QObject::tr("%1 (read-only)").arg(name) : name;
}

namespace {
// A name a person recognises for a store given on the command line: its database, and the
// host when it is a network one ("idem on db.internal"); a Unix socket adds nothing useful.
QString nameFor(const QString& conninfo) {
  const QByteArray utf8 = conninfo.toUtf8();
  std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> opts(PQconninfoParse(utf8.constData(), nullptr),
                                                                      &PQconninfoFree);
  QString database, host, service;
  for (auto* o = opts.get(); o && o->keyword; ++o) {
    if (!o->val) continue;
    const QString key = QString::fromUtf8(o->keyword), value = QString::fromUtf8(o->val);
    if (key == u"dbname"_s) database = value;
    else if (key == u"host"_s) host = value;
    else if (key == u"service"_s) service = value;
  }
  if (database.isEmpty() && !service.isEmpty()) return QObject::tr("service %1").arg(service);
  if (database.isEmpty()) return QObject::tr("store given with --db");
  const bool networkHost = !host.isEmpty() && !host.startsWith(u'/') && !host.startsWith(u'@');
  return networkHost ? QObject::tr("%1 on %2").arg(database, host.section(u',', 0, 0)) : database;
}
}  // namespace

ConnectionProfile ConnectionProfile::fromConninfo(const QString& conninfo) {
  ConnectionProfile p;
  p.kind = Kind::Conninfo;
  p.conninfo = conninfo;
  p.name = nameFor(conninfo);
  return p;
}

QString profileProblem(const ConnectionProfile& p) {
  if (p.kind != ConnectionProfile::Kind::Conninfo || p.conninfo.isEmpty()) return {};
  try {
    (void)ConnectParams::withoutSecrets(p.conninfo);
    return {};
  } catch (const std::invalid_argument& e) {
    return QObject::tr("The connection string of profile \"%1\" cannot be read (%2). It was not saved: it may hold "
                       "a password, and a string libpq cannot read cannot be cleaned of one. Correct it, or clear it.")
        .arg(p.name, QString::fromUtf8(e.what()));
  }
}

namespace {
// What is stored of a profile's connection string: every secret removed. Of a profile of
// another kind it is only a leftover of the form: kept when it reads, dropped when not.
QString storedConninfo(const ConnectionProfile& p) {
  if (p.conninfo.isEmpty()) return {};
  try {
    return ConnectParams::withoutSecrets(p.conninfo);
  } catch (const std::invalid_argument&) {
    if (p.kind == ConnectionProfile::Kind::Conninfo) throw std::invalid_argument(profileProblem(p).toStdString());
    return {};
  }
}
}  // namespace

QList<ConnectionProfile> ProfileStore::load() const {
  QList<ConnectionProfile> out;
  const int n = m_settings.beginReadArray(u"profiles"_s);
  for (int i = 0; i < n; ++i) {
    m_settings.setArrayIndex(i);
    ConnectionProfile p;
    p.name = m_settings.value(u"name"_s).toString();
    const QString kind = m_settings.value(u"kind"_s).toString();
    p.kind = kind == u"conninfo"_s ? ConnectionProfile::Kind::Conninfo
             : kind == u"service"_s ? ConnectionProfile::Kind::Service
                                    : ConnectionProfile::Kind::Fields;
    p.host = m_settings.value(u"host"_s).toString();
    p.port = m_settings.value(u"port"_s, 5432).toInt();
    p.database = m_settings.value(u"database"_s).toString();
    p.user = m_settings.value(u"user"_s).toString();
    p.sslmode = m_settings.value(u"sslmode"_s).toString();
    p.conninfo = m_settings.value(u"conninfo"_s).toString();
    p.service = m_settings.value(u"service"_s).toString();
    p.readOnly = m_settings.value(u"readOnly"_s, true).toBool();
    if (!p.name.isEmpty()) out.append(p);
  }
  m_settings.endArray();
  return out;
}

void ProfileStore::save(const QList<ConnectionProfile>& profiles) {
  QStringList conninfos;  // every profile checked before anything is written
  for (const ConnectionProfile& p : profiles) conninfos << storedConninfo(p);
  m_settings.remove(u"profiles"_s);
  m_settings.beginWriteArray(u"profiles"_s, static_cast<int>(profiles.size()));
  for (int i = 0; i < profiles.size(); ++i) {
    const ConnectionProfile& p = profiles[i];
    m_settings.setArrayIndex(i);
    m_settings.setValue(u"name"_s, p.name);
    m_settings.setValue(u"kind"_s, p.kind == ConnectionProfile::Kind::Conninfo ? u"conninfo"_s
                                   : p.kind == ConnectionProfile::Kind::Service ? u"service"_s
                                                                                 : u"fields"_s);
    m_settings.setValue(u"host"_s, p.host);
    m_settings.setValue(u"port"_s, p.port);
    m_settings.setValue(u"database"_s, p.database);
    m_settings.setValue(u"user"_s, p.user);
    m_settings.setValue(u"sslmode"_s, p.sslmode);
    // A pasted conninfo may carry a password or sslpassword: settings never get them.
    m_settings.setValue(u"conninfo"_s, conninfos[i]);
    m_settings.setValue(u"service"_s, p.service);
    m_settings.setValue(u"readOnly"_s, p.readOnly);
  }
  m_settings.endArray();
}

QString ProfileStore::lastUsed() const { return m_settings.value(u"connection/lastProfile"_s).toString(); }
void ProfileStore::setLastUsed(const QString& name) { m_settings.setValue(u"connection/lastProfile"_s, name); }

}  // namespace idem::ui
