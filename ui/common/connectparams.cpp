#include "ui/common/connectparams.h"

#include <libpq-fe.h>

#include <QList>
#include <QPair>
#include <QStringList>

#include <memory>
#include <stdexcept>

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

struct Options {
  QList<QPair<QString, QString>> set;  // keyword, value for every option the string set
};

// PQconninfoParse accepts keyword strings and URIs alike, so a URI profile can be extended
// with a password without string surgery on the URI.
Options parse(const QString& conninfo) {
  char* err = nullptr;
  const QByteArray utf8 = conninfo.toUtf8();
  std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> opts(PQconninfoParse(utf8.constData(), &err),
                                                                    &PQconninfoFree);
  if (!opts) {
    QString message = err ? QString::fromUtf8(err).trimmed() : u"out of memory"_s;
    if (err) PQfreemem(err);
    throw std::invalid_argument(message.toStdString());
  }
  Options out;
  for (PQconninfoOption* o = opts.get(); o->keyword; ++o)
    if (o->val) out.set.append({QString::fromUtf8(o->keyword), QString::fromUtf8(o->val)});
  return out;
}

}  // namespace

QString quoteConninfoValue(const QString& value) {
  QString escaped = value;
  escaped.replace(u"\\"_s, u"\\\\"_s).replace(u"'"_s, u"\\'"_s);
  return u"'"_s % escaped % u"'"_s;
}

std::string ConnectParams::toLibpq() const {
  Options opts = parse(conninfo);
  auto has = [&](const QString& key) {
    for (const auto& [k, v] : opts.set)
      if (k == key) return true;
    return false;
  };
  QStringList parts;
  for (const auto& [k, v] : opts.set) {
    if (k == u"password"_s && !password.isEmpty()) continue;
    parts << k % u"="_s % quoteConninfoValue(v);
  }
  if (!password.isEmpty()) parts << u"password="_s % quoteConninfoValue(password);
  if (!has(u"application_name"_s)) parts << u"application_name='idem-console'"_s;
  if (!has(u"connect_timeout"_s)) parts << u"connect_timeout="_s % QString::number(connectTimeoutS);
  return parts.join(u' ').toStdString();
}

QString ConnectParams::withoutPassword(const QString& conninfo) {
  Options opts;
  try {
    opts = parse(conninfo);
  } catch (const std::invalid_argument&) {
    return conninfo;
  }
  QStringList parts;
  for (const auto& [k, v] : opts.set)
    if (k != u"password"_s) parts << k % u"="_s % quoteConninfoValue(v);
  return parts.join(u' ');
}

}  // namespace idem::ui
