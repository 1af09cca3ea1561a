#include "ui/common/serverinfo.h"

using namespace Qt::StringLiterals;

namespace idem::ui {

QString ServerInfo::endpoint() const {
  const QString where = host.startsWith(u'/') ? u"socket"_s : host;
  return port.isEmpty() ? where : where % u":"_s % port;
}

}  // namespace idem::ui
