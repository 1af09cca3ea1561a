#pragma once
// The zone the console shows times in for people: UTC or the machine's local zone, the agent's
// choice (the profile button's menu, "Times in"), kept in QSettings. Every human-facing time
// follows it — tables, tooltips, the timeline's ticks, the Explain tab and the PDF/HTML exports
// (core's explanation is computed in it). Machine-readable output (CSV, ISO-8601 in JSON) stays
// UTC whatever it says.
#include <QDateTime>
#include <QObject>
#include <QString>
#include <atomic>

#include "core/text/humantime.h"

class QAbstractItemModel;
class QSettings;

namespace idem::ui {

enum class DisplayZone { Utc, Local };

/// One per process (a setting of the agent, like the palette), changed on the GUI thread by the
/// window, which saves it. Read from any thread: exports are laid out on the file pool.
class TimeZoneSetting final : public QObject {
  Q_OBJECT
  Q_DISABLE_COPY_MOVE(TimeZoneSetting)

 public:
  static constexpr const char* kSettingKey = "display/timeZone";  ///< "utc" | "local"

  [[nodiscard]] static TimeZoneSetting& instance();
  [[nodiscard]] DisplayZone zone() const { return m_zone.load(std::memory_order_relaxed); }
  /// Emits changed when the zone differs.
  void setZone(DisplayZone zone);
  /// Reads the setting (UTC when absent or unknown) and applies it.
  void load(const QSettings& settings);
  void save(QSettings& settings) const;

  /// t in the zone shown (its abbreviation reads "UTC", "EST", …).
  [[nodiscard]] QDateTime inZone(const QDateTime& t) const;
  /// The same zone for core (explain's narrative and documents).
  [[nodiscard]] text::TimeZone coreZone() const;
  /// "America/New_York": the zone "Local time" means on this machine, as core resolves it.
  [[nodiscard]] static QString localZoneName();

  /// Repaints model's rows whenever the zone changes (its data() formats times on demand).
  static void refreshOnChange(QAbstractItemModel* model);

 signals:
  void changed(idem::ui::DisplayZone zone);

 private:
  TimeZoneSetting() = default;
  std::atomic<DisplayZone> m_zone{DisplayZone::Utc};
};

}  // namespace idem::ui
