#include "ui/common/timefmt.h"

#include <QCoreApplication>
#include <QTimeZone>
#include <charconv>
#include <cmath>

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {
QString tr(const char* s) { return QCoreApplication::translate("TimeFormat", s); }
}  // namespace

QString formatAbsolute(const QDateTime& t) {
  if (!t.isValid()) return {};
  const QDateTime local = t.toLocalTime();
  QString zone = local.timeZoneAbbreviation();
  return local.toString(u"yyyy-MM-dd HH:mm:ss"_s) % u" "_s % zone;
}

QString formatDuration(qint64 ms) {
  ms = std::llabs(ms);
  if (ms < 1000) return tr("%1 ms").arg(ms);
  const qint64 s = ms / 1000;
  if (s < 60) return ms < 10000 ? tr("%1 s").arg(static_cast<double>(ms) / 1000.0, 0, 'f', 1) : tr("%1 s").arg(s);
  const qint64 m = s / 60;
  if (m < 60) return s % 60 ? tr("%1 min %2 s").arg(m).arg(s % 60) : tr("%1 min").arg(m);
  const qint64 h = m / 60;
  if (h < 48) return m % 60 ? tr("%1 h %2 min").arg(h).arg(m % 60) : tr("%1 h").arg(h);
  const qint64 d = h / 24;
  if (d < 60) return h % 24 ? tr("%1 days %2 h").arg(d).arg(h % 24) : tr("%1 days").arg(d);
  return tr("%1 days").arg(d);
}

QString formatRelative(const QDateTime& t, const QDateTime& now) {
  if (!t.isValid()) return {};
  const qint64 delta = now.msecsTo(t);
  if (std::llabs(delta) < 1000) return tr("now");
  return delta > 0 ? tr("in %1").arg(formatDuration(delta)) : tr("%1 ago").arg(formatDuration(delta));
}

QString formatExpiry(const QDateTime& expires, const QDateTime& now) {
  if (!expires.isValid()) return {};
  const qint64 delta = now.msecsTo(expires);
  return delta >= 0 ? tr("expires in %1").arg(formatDuration(delta)) : tr("expired %1 ago").arg(formatDuration(delta));
}

QDateTime fromEpochText(std::string_view text) {
  if (text.empty()) return {};
  double seconds = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc{}) return {};
  return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(std::llround(seconds * 1000.0)), Qt::UTC);
}

}  // namespace idem::ui
