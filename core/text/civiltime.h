#pragma once
// UTC calendar fields from epoch milliseconds, and fixed-width digits, for the timestamps the hot
// path writes (Idempotency-Expires, the trace's COPY rows). gmtime_r + snprintf cost more than
// the rest of a replay's formatting together; this is plain arithmetic.
#include <string>
#include <string_view>

namespace idem::text {

struct CivilTime {
  int year = 1970;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
  int hour = 0;
  int minute = 0;
  int second = 0;
  int millisecond = 0;
  int weekday = 4;  // 0 = Sunday (1970-01-01 was a Thursday)
};

/// The proleptic Gregorian UTC date and time of an instant (negative instants included).
[[nodiscard]] CivilTime civilFromEpochMs(long long epochMs);

/// Appends value in decimal, left-padded with zeros to at least width digits (value >= 0).
void appendPadded(std::string& out, int value, int width);

/// Appends "YYYY-MM-DD".
void appendDate(std::string& out, const CivilTime& t);
/// Appends "HH:MM:SS".
void appendClock(std::string& out, const CivilTime& t);
/// Appends "YYYY-MM-DD<separator>HH:MM:SS.mmm<zone>", e.g. ('T', "Z") for ISO 8601 or
/// (' ', "+00") for PostgreSQL's COPY input.
void appendDateTime(std::string& out, long long epochMs, char separator, std::string_view zone);

}  // namespace idem::text
