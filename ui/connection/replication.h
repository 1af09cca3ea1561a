#pragma once
// Replication in the status bar: on a hot standby how old the data it shows is and whether it
// was promoted while the console looked at it; on a primary which standbys follow it. The state is read by the worker's ping
// (ui/common/replicationstate.h); these are the status bar's words for it (statuswidget.cpp).
#include <QString>

#include "ui/common/replicationstate.h"

namespace idem::ui {

struct ServerInfo;

/// The status bar's words for replication: on a standby "data as of 2.3 s ago" (or that it was
/// promoted), on a primary its standbys ("2 standbys, 1 synchronous", "no standby").
[[nodiscard]] QString replicationText(const ServerInfo& info, const ReplicationState& r);
/// What "data as of" measures, for the tooltip.
[[nodiscard]] QString replicationToolTip();

}  // namespace idem::ui
