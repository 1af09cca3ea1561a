#include "ui/common/timezonesetting.h"

#include <QAbstractItemModel>
#include <QSettings>

using namespace Qt::StringLiterals;

namespace idem::ui {

TimeZoneSetting& TimeZoneSetting::instance() {
  static TimeZoneSetting setting;
  return setting;
}

void TimeZoneSetting::setZone(DisplayZone zone) {
  if (m_zone.exchange(zone) == zone) return;
  emit changed(zone);
}

void TimeZoneSetting::load(const QSettings& settings) {
  const QString value = settings.value(QLatin1String(kSettingKey)).toString();
  setZone(value == u"local"_s ? DisplayZone::Local : DisplayZone::Utc);
}

void TimeZoneSetting::save(QSettings& settings) const {
  settings.setValue(QLatin1String(kSettingKey), zone() == DisplayZone::Local ? u"local"_s : u"utc"_s);
}

QDateTime TimeZoneSetting::inZone(const QDateTime& t) const {
  return zone() == DisplayZone::Local ? t.toLocalTime() : t.toUTC();
}

text::TimeZone TimeZoneSetting::coreZone() const {
  return zone() == DisplayZone::Local ? text::TimeZone::local() : text::TimeZone::utc();
}

QString TimeZoneSetting::localZoneName() { return QString::fromStdString(text::TimeZone::local().name()); }

void TimeZoneSetting::refreshOnChange(QAbstractItemModel* model) {
  connect(&instance(), &TimeZoneSetting::changed, model, [model] {
    const int rows = model->rowCount();
    const int columns = model->columnCount();
    if (rows > 0 && columns > 0) emit model->dataChanged(model->index(0, 0), model->index(rows - 1, columns - 1));
  });
}

}  // namespace idem::ui
