#include "ui/common/timefmt.h"

#include <QCoreApplication>
#include <charconv>
#include <cmath>

#include "core/text/humanduration.h"
#include "ui/common/timezonesetting.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {
QString tr(const char* s) { return QCoreApplication::translate("TimeFormat", s); }
}  // namespace

QString formatAbsolute(const QDateTime& t) {
  if (!t.isValid()) return {};
  const QDateTime shown = TimeZoneSetting::instance().inZone(t);
  return shown.toString(u"yyyy-MM-dd HH:mm:ss"_s) % u" "_s % shown.timeZoneAbbreviation();
}

QString formatDuration(qint64 ms) {
  return QString::fromStdString(text::humanDuration(std::chrono::milliseconds(std::llabs(ms))));
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

QString formatStaleNote(const QDateTime& asOf) {
  const QDateTime shown = TimeZoneSetting::instance().inZone(asOf);
  return tr("as of %1, store unreachable").arg(shown.toString(u"HH:mm"_s) % u" "_s % shown.timeZoneAbbreviation());
}

QDateTime fromEpochText(std::string_view text) {
  if (text.empty()) return {};
  double seconds = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc{}) return {};
  return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(std::llround(seconds * 1000.0)), Qt::UTC);
}

}  // namespace idem::ui
