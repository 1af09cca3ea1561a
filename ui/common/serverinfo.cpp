#include "ui/common/serverinfo.h"

#include <QObject>

using namespace Qt::StringLiterals;

namespace idem::ui {

bool ServerInfo::localSocket() const { return host.isEmpty() || host.startsWith(u'/') || host.startsWith(u'@'); }

QString ServerInfo::tlsSummary() const {
  if (!tls) return localSocket() ? QObject::tr("TLS off (local socket)") : QObject::tr("TLS off");
  const QString checked = sslmode == u"verify-full"_s ? QObject::tr("certificate and host name verified")
                          : sslmode == u"verify-ca"_s ? QObject::tr("certificate verified, host name not checked")
                                                      : QObject::tr("server certificate not verified");
  return QObject::tr("TLS on (%1, %2: %3)").arg(tlsProtocol, sslmode, checked);
}

QString ServerInfo::endpoint() const {
  const QString where = localSocket() ? u"socket"_s : host;
  return port.isEmpty() ? where : where % u":"_s % port;
}

}  // namespace idem::ui
