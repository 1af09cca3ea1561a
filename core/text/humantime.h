#pragma once
// Times for people, one rule everywhere they are read (explain's narrative and tables, the
// customer's explanation): "4 Dec 2026, 11:05 UTC" — day, month abbreviated in English, year,
// 24-hour clock, the zone's abbreviation. Minutes by default, seconds when several events fall
// in one minute (a timeline). Truncated, never rounded up: 11:05:59 reads 11:05, as durations
// are truncated (humanduration.h). ISO-8601 stays for machines (JSON, isoUtc).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace date {
class time_zone;  // Howard Hinnant's tz library (the system's zoneinfo); std::chrono's from GCC 14
}

namespace idem::text {

/// The zone times are shown in: UTC, the machine's local zone, or an IANA zone ("Europe/Paris").
class TimeZone {
 public:
  TimeZone() = default;  ///< UTC
  [[nodiscard]] static TimeZone utc() { return {}; }
  /// $TZ when it names a zone, else the system's zone (/etc/localtime); UTC when neither is known.
  [[nodiscard]] static TimeZone local();
  /// "UTC" (also "utc", "Z"), "local", or an IANA name; nullopt for a name the zone database lacks.
  [[nodiscard]] static std::optional<TimeZone> parse(std::string_view name);
  /// "UTC" or the IANA name ("Europe/Paris").
  [[nodiscard]] std::string name() const;
  [[nodiscard]] bool isUtc() const { return m_zone == nullptr; }

 private:
  const date::time_zone* m_zone = nullptr;  // nullptr: UTC
  friend struct ZoneAccess;
};

enum class TimePrecision { Minute, Second };

/// "4 Dec 2026, 11:05 UTC", "4 Dec 2026, 12:05 CET", "4 Dec 2026, 15:05 UTC+4" (a zone whose
/// abbreviation is only an offset); with Second, "4 Dec 2026, 11:05:09 UTC".
[[nodiscard]] std::string humanTime(std::int64_t epochMicros, const TimeZone& zone,
                                    TimePrecision precision = TimePrecision::Minute);

}  // namespace idem::text
