#include "core/enforce/problem.h"

#include "core/http/problemresponse.h"
#include "core/text/civiltime.h"

namespace idem::enforce {

int problemStatus(Problem p) { return http::problemInfo(p).status; }
std::string_view problemSlug(Problem p) { return http::problemInfo(p).slug; }

Response makeProblem(Problem p, std::string_view docsUrl, std::string_view detail, std::string_view key) {
  return http::problemResponse(p, docsUrl, detail, 0, {{"idempotency_key", key}});
}

std::string httpDate(long long epochMs) {
  // Spelled out rather than strftime: a GUI process may have set a non-C locale.
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const text::CivilTime t = text::civilFromEpochMs(epochMs);
  std::string out;
  out.reserve(29);  // "Sun, 06 Nov 1994 08:49:37 GMT"
  out += kDays[t.weekday];
  out += ", ";
  text::appendPadded(out, t.day, 2);
  out += ' ';
  out += kMonths[t.month - 1];
  out += ' ';
  text::appendPadded(out, t.year, 4);
  out += ' ';
  text::appendClock(out, t);
  out += " GMT";
  return out;
}

}  // namespace idem::enforce
