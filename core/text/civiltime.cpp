#include "core/text/civiltime.h"

namespace idem::text {

CivilTime civilFromEpochMs(long long epochMs) {
  // Floor division so that instants before 1970 land on the right day and second.
  long long days = epochMs / 86400000;
  long long msOfDay = epochMs % 86400000;
  if (msOfDay < 0) {
    msOfDay += 86400000;
    --days;
  }
  CivilTime t;
  t.millisecond = static_cast<int>(msOfDay % 1000);
  const long long secOfDay = msOfDay / 1000;
  t.hour = static_cast<int>(secOfDay / 3600);
  t.minute = static_cast<int>(secOfDay / 60 % 60);
  t.second = static_cast<int>(secOfDay % 60);
  t.weekday = static_cast<int>(((days % 7) + 11) % 7);  // day 0 was a Thursday (4)

  // Days to year/month/day in 400-year eras starting on 0000-03-01 (H. Hinnant's civil_from_days).
  const long long z = days + 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const long long doe = z - era * 146097;
  const long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const long long mp = (5 * doy + 2) / 153;
  t.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  t.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  t.year = static_cast<int>(yoe + era * 400 + (t.month <= 2 ? 1 : 0));
  return t;
}

void appendPadded(std::string& out, int value, int width) {
  char digits[12];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 && n < 12);
  for (int i = n; i < width; ++i) out.push_back('0');
  while (n > 0) out.push_back(digits[--n]);
}

void appendDate(std::string& out, const CivilTime& t) {
  appendPadded(out, t.year, 4);
  out += '-';
  appendPadded(out, t.month, 2);
  out += '-';
  appendPadded(out, t.day, 2);
}

void appendClock(std::string& out, const CivilTime& t) {
  appendPadded(out, t.hour, 2);
  out += ':';
  appendPadded(out, t.minute, 2);
  out += ':';
  appendPadded(out, t.second, 2);
}

void appendDateTime(std::string& out, long long epochMs, char separator, std::string_view zone) {
  const CivilTime t = civilFromEpochMs(epochMs);
  appendDate(out, t);
  out += separator;
  appendClock(out, t);
  out += '.';
  appendPadded(out, t.millisecond, 3);
  out += zone;
}

}  // namespace idem::text
