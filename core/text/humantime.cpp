#include "core/text/humantime.h"

#include <cstdlib>
#include <date/tz.h>

#include "core/text/civiltime.h"

namespace idem::text {

struct ZoneAccess {
  static const date::time_zone* get(const TimeZone& z) { return z.m_zone; }
  static TimeZone make(const date::time_zone* zone) {
    TimeZone z;
    z.m_zone = zone;
    return z;
  }
};

namespace {

constexpr std::int64_t kMicrosPerMs = 1000;
constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

const date::time_zone* find(std::string_view name) {
  try {
    return date::locate_zone(name);
  } catch (const std::exception&) {  // not in the zone database
    return nullptr;
  }
}

bool utcName(std::string_view name) {
  return name == "UTC" || name == "utc" || name == "Z" || name == "Etc/UTC" || name == "GMT";
}

// "+04" -> "UTC+4", "-0330" -> "UTC-3:30": zones without a letter abbreviation say their offset.
std::string zoneLabel(const std::string& abbrev, std::chrono::seconds offset) {
  if (abbrev.empty() || (abbrev[0] != '+' && abbrev[0] != '-')) return abbrev;
  const long long total = offset.count();
  const long long magnitude = total < 0 ? -total : total;
  std::string out = std::string("UTC") + (total < 0 ? "-" : "+") + std::to_string(magnitude / 3600);
  if (magnitude % 3600) {
    out += ':';
    appendPadded(out, static_cast<int>(magnitude % 3600 / 60), 2);
  }
  return out;
}

}  // namespace

TimeZone TimeZone::local() {
  if (const char* tz = std::getenv("TZ"); tz && *tz) {
    std::string_view name(tz);
    if (name.front() == ':') name.remove_prefix(1);
    if (utcName(name)) return {};
    if (auto* zone = find(name)) return ZoneAccess::make(zone);
  }
  try {
    const date::time_zone* zone = date::current_zone();
    return utcName(zone->name()) ? TimeZone{} : ZoneAccess::make(zone);
  } catch (const std::exception&) {  // no /etc/localtime: UTC, as a server would run
    return {};
  }
}

std::optional<TimeZone> TimeZone::parse(std::string_view name) {
  if (utcName(name)) return TimeZone{};
  if (name == "local") return local();
  if (auto* zone = find(name)) return ZoneAccess::make(zone);
  return std::nullopt;
}

std::string TimeZone::name() const { return m_zone ? m_zone->name() : "UTC"; }

std::string humanTime(std::int64_t epochMicros, const TimeZone& zone, TimePrecision precision) {
  // Floor to milliseconds (civilFromEpochMs floors negative instants too).
  std::int64_t ms = epochMicros / kMicrosPerMs - (epochMicros % kMicrosPerMs < 0 ? 1 : 0);
  std::string label = "UTC";
  if (const date::time_zone* z = ZoneAccess::get(zone)) {
    const date::sys_seconds at{std::chrono::seconds{ms >= 0 ? ms / 1000 : (ms - 999) / 1000}};
    const date::sys_info info = z->get_info(at);
    ms += std::chrono::duration_cast<std::chrono::milliseconds>(info.offset).count();
    label = zoneLabel(info.abbrev, info.offset);
  }
  const CivilTime t = civilFromEpochMs(ms);
  std::string out = std::to_string(t.day) + " " + kMonths[t.month - 1] + " " + std::to_string(t.year) + ", ";
  appendPadded(out, t.hour, 2);
  out += ':';
  appendPadded(out, t.minute, 2);
  if (precision == TimePrecision::Second) {
    out += ':';
    appendPadded(out, t.second, 2);
  }
  return out + " " + label;
}

}  // namespace idem::text
