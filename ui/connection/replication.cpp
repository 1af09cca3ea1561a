#include "ui/connection/replication.h"

#include <QCoreApplication>

#include "ui/common/serverinfo.h"

namespace idem::ui {

namespace {
QString tr(const char* s) { return QCoreApplication::translate("Replication", s); }
}  // namespace

QString replicationText(const ServerInfo& info, const ReplicationState& r) {
  if (!info.standby) {
    // On a primary: who would be promoted, and whether a promotion keeps every acknowledged key.
    if (!r.known) return {};
    if (r.standbys == 0) return tr("no standby");
    const QString n = r.standbys == 1 ? tr("1 standby") : tr("%1 standbys").arg(r.standbys);
    if (r.syncStandbys < 0) return n;
    return r.syncStandbys == 0 ? tr("%1, none synchronous").arg(n) : tr("%1, %2 synchronous").arg(n).arg(r.syncStandbys);
  }
  if (r.known && !r.standby)
    return QStringLiteral("<b style='color:#e09b00'>") +
           tr("promoted: this server is no longer a standby and takes writes; reconnect to use it as the primary") +
           QStringLiteral("</b>");
  if (!r.known) return {};
  if (r.dataAgeS < 0) return tr("data as of: nothing replayed since the standby started");
  const double s = r.dataAgeS;
  const QString age = s < 10 ? QString::number(s, 'f', 1) + QStringLiteral(" s")
                    : s < 120 ? QString::number(s, 'f', 0) + QStringLiteral(" s")
                              : QString::number(s / 60, 'f', 0) + QStringLiteral(" min");
  return tr("data as of %1 ago").arg(age);
}

QString replicationToolTip() {
  return tr("On a standby: time since the last transaction it replayed was committed on the primary (while the "
            "primary is idle it grows although nothing is missing). On a primary: the standbys streaming from it; "
            "a failover to a synchronous one keeps every acknowledged key, to an asynchronous one it can forget "
            "the last moments. `idemctl status` names them.");
}

}  // namespace idem::ui
