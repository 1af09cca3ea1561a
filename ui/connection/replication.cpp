#include "ui/connection/replication.h"

#include <QCoreApplication>

#include "ui/common/serverinfo.h"

namespace idem::ui {

namespace {
QString tr(const char* s) { return QCoreApplication::translate("Replication", s); }
}  // namespace

QString replicationText(const ServerInfo& info, const ReplicationState& r) {
  if (!info.standby) return {};
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
  return tr("Time since the last transaction this standby replayed was committed on the primary. While the primary "
            "is idle it grows although nothing is missing.");
}

}  // namespace idem::ui
