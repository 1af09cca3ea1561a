#include "ui/common/connectparams.h"

#include <libpq-fe.h>

#include <QCoreApplication>
#include <QList>
#include <QPair>
#include <QRegularExpression>
#include <QSet>
#include <QStringList>

#include <memory>
#include <stdexcept>

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

using OptionsPtr = std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)>;

struct Options {
  QList<QPair<QString, QString>> set;  // keyword, value for every option the string set
  [[nodiscard]] QString value(const QString& key) const {
    for (const auto& [k, v] : set)
      if (k == key) return v;
    return {};
  }
  [[nodiscard]] bool has(const QString& key) const {
    for (const auto& [k, v] : set)
      if (k == key) return true;
    return false;
  }
};

// Every keyword libpq knows, and those it holds secret ("*" display flag: password,
// sslpassword, and whatever later versions add), from libpq itself.
struct Keywords {
  QSet<QString> all;
  QSet<QString> secret;
};
const Keywords& keywords() {
  static const Keywords k = [] {
    Keywords out;
    OptionsPtr defaults(PQconndefaults(), &PQconninfoFree);
    for (PQconninfoOption* o = defaults.get(); o && o->keyword; ++o) {
      out.all.insert(QString::fromUtf8(o->keyword));
      if (o->dispchar && QByteArrayView(o->dispchar).contains('*')) out.secret.insert(QString::fromUtf8(o->keyword));
    }
    out.secret.insert(u"password"_s);  // whatever libpq's flags say
    out.secret.insert(u"sslpassword"_s);
    return out;
  }();
  return k;
}

// libpq quotes the piece it could not read ("missing \"=\" after \"hunter2\""), which may be a
// secret: only keyword names and "=" stay.
QString withoutQuotedFragments(const QString& message) {
  static const QRegularExpression quoted(u"\"([^\"]*)\""_s);
  QString out;
  qsizetype at = 0;
  for (auto it = quoted.globalMatch(message); it.hasNext();) {
    const auto m = it.next();
    out += message.mid(at, m.capturedStart() - at);
    const QString inner = m.captured(1);
    out += (inner == u"="_s || keywords().all.contains(inner)) ? m.captured(0) : u"\"…\""_s;
    at = m.capturedEnd();
  }
  return out + message.mid(at);
}

// PQconninfoParse accepts keyword strings and URIs alike, so a URI profile can be extended
// with a password without string surgery on the URI.
Options parse(const QString& conninfo) {
  char* err = nullptr;
  const QByteArray utf8 = conninfo.toUtf8();
  OptionsPtr opts(PQconninfoParse(utf8.constData(), &err), &PQconninfoFree);
  if (!opts) {
    QString message = err ? QString::fromUtf8(err).trimmed() : u"out of memory"_s;
    if (err) PQfreemem(err);
    throw std::invalid_argument(withoutQuotedFragments(message).toStdString());
  }
  Options out;
  for (PQconninfoOption* o = opts.get(); o->keyword; ++o)
    if (o->val) out.set.append({QString::fromUtf8(o->keyword), QString::fromUtf8(o->val)});
  return out;
}

// libpq's own rule: a host that is empty or starts with '/' (or '@', Linux's abstract
// namespace) is a Unix socket; hostaddr is always TCP. The environment fills what is unset.
bool reachesOverTcp(const Options& opts) {
  const QString hostaddr = opts.has(u"hostaddr"_s) ? opts.value(u"hostaddr"_s) : qEnvironmentVariable("PGHOSTADDR");
  if (!hostaddr.trimmed().isEmpty()) return true;
  const QString hosts = opts.has(u"host"_s) ? opts.value(u"host"_s) : qEnvironmentVariable("PGHOST");
  for (const QString& h : hosts.split(u',')) {
    const QString host = h.trimmed();
    if (!host.isEmpty() && !host.startsWith(u'/') && !host.startsWith(u'@')) return true;
  }
  return false;
}

QString defaultSslmodeFor(const Options& opts) {
  if (opts.has(u"sslmode"_s) || opts.has(u"service"_s) || qEnvironmentVariableIsSet("PGSSLMODE")) return {};
  // Only a checked certificate and host name stop a machine in the middle from reading the
  // password exchange and the stored responses: require alone only stops listeners.
  return reachesOverTcp(opts) ? u"verify-full"_s : QString();
}

}  // namespace

QString quoteConninfoValue(const QString& value) {
  QString escaped = value;
  escaped.replace(u"\\"_s, u"\\\\"_s).replace(u"'"_s, u"\\'"_s);
  return u"'"_s % escaped % u"'"_s;
}

std::string ConnectParams::toLibpq() const {
  const Options opts = parse(conninfo);
  QStringList parts;
  for (const auto& [k, v] : opts.set) {
    if (k == u"password"_s && !password.isEmpty()) continue;
    parts << k % u"="_s % quoteConninfoValue(v);
  }
  if (!password.isEmpty()) parts << u"password="_s % quoteConninfoValue(password);
  if (const QString sslmode = defaultSslmodeFor(opts); !sslmode.isEmpty())
    parts << u"sslmode="_s % quoteConninfoValue(sslmode);
  if (!opts.has(u"application_name"_s)) parts << u"application_name='idem-console'"_s;
  if (!opts.has(u"connect_timeout"_s)) parts << u"connect_timeout="_s % QString::number(connectTimeoutS);
  return parts.join(u' ').toStdString();
}

bool ConnectParams::isSecretKeyword(const QString& keyword) { return keywords().secret.contains(keyword); }

QString ConnectParams::withoutSecrets(const QString& conninfo) {
  const Options opts = parse(conninfo);
  QStringList parts;
  for (const auto& [k, v] : opts.set)
    if (!isSecretKeyword(k)) parts << k % u"="_s % quoteConninfoValue(v);
  return parts.join(u' ');
}

QString ConnectParams::forDisplay(const QString& conninfo) {
  try {
    return withoutSecrets(conninfo);
  } catch (const std::invalid_argument&) {
    return QCoreApplication::translate("ConnectParams", "(a connection string libpq cannot read)");
  }
}

QString ConnectParams::defaultSslmode(const QString& conninfo) {
  try {
    return defaultSslmodeFor(parse(conninfo));
  } catch (const std::invalid_argument&) {
    return {};
  }
}

}  // namespace idem::ui
