#pragma once
// Times as docs/design.md §7 asks: absolute with zone and relative ("expires in 3 h 12 min",
// "expired 2 days ago"); durations in the largest sensible units.
#include <QDateTime>
#include <QString>

namespace idem::ui {

/// "2024-05-03 14:07:12 CEST": in the zone the agent chose (timezonesetting.h), UTC or local.
[[nodiscard]] QString formatAbsolute(const QDateTime& t);
/// The length of ms, without its sign, by core's one rule (core/text/humanduration.h):
/// "3 h 12 min", "2 days", "45 s", "850 ms".
[[nodiscard]] QString formatDuration(qint64 ms);
/// "in 3 h 12 min" / "2 days ago" relative to now.
[[nodiscard]] QString formatRelative(const QDateTime& t, const QDateTime& now);
/// For an expiry: "expires in 3 h 12 min" / "expired 2 days ago".
[[nodiscard]] QString formatExpiry(const QDateTime& expires, const QDateTime& now);
/// What a view shows after the store was lost: "as of 14:07 UTC, store unreachable" (asOf: when
/// its data was read). One wording for the key list and the key's detail.
[[nodiscard]] QString formatStaleNote(const QDateTime& asOf);
/// Seconds since the epoch (as PostgreSQL's extract(epoch …) prints it) to a QDateTime; null for "".
[[nodiscard]] QDateTime fromEpochText(std::string_view text);

}  // namespace idem::ui
