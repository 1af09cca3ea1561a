#include "core/explain/history.h"

#include "core/store/keystore.h"

#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>

namespace idem::explain {
namespace {

constexpr std::int64_t kMicrosPerSecond = 1'000'000;
constexpr std::int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;

std::int64_t floorDiv(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

}  // namespace

std::string isoUtc(Instant t) {
  using namespace std::chrono;
  const std::int64_t day = floorDiv(t.micros, kMicrosPerDay);
  const std::int64_t inDay = t.micros - day * kMicrosPerDay;
  const year_month_day ymd{sys_days{days{day}}};
  const auto secs = inDay / kMicrosPerSecond;
  const auto frac = inDay % kMicrosPerSecond;
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lld", static_cast<int>(ymd.year()),
                        static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                        static_cast<long long>(secs / 3600), static_cast<long long>(secs / 60 % 60),
                        static_cast<long long>(secs % 60));
  std::string out(buf, static_cast<std::size_t>(n));
  if (frac != 0) {
    if (frac % 1000 == 0)
      std::snprintf(buf, sizeof buf, ".%03lld", static_cast<long long>(frac / 1000));
    else
      std::snprintf(buf, sizeof buf, ".%06lld", static_cast<long long>(frac));
    out += buf;
  }
  return out + "Z";
}

std::optional<Instant> parseIsoUtc(std::string_view s) {
  using namespace std::chrono;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!digits(s, 0, 4, y) || s.size() < 20 || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d) || s[10] != 'T' || !digits(s, 11, 2, h) || s[13] != ':' || !digits(s, 14, 2, mi) ||
      s[16] != ':' || !digits(s, 17, 2, sec))
    return std::nullopt;
  std::size_t pos = 19;
  std::int64_t frac = 0;
  if (s[pos] == '.') {
    ++pos;
    std::size_t n = 0;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      if (n < 6) frac = frac * 10 + (s[pos] - '0');
      ++n;
      ++pos;
    }
    if (n == 0) return std::nullopt;
    for (std::size_t i = n; i < 6; ++i) frac *= 10;
  }
  if (pos + 1 != s.size() || s[pos] != 'Z') return std::nullopt;
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 59) return std::nullopt;
  const std::int64_t days = sys_days{ymd}.time_since_epoch().count();
  return Instant{days * kMicrosPerDay + (static_cast<std::int64_t>(h) * 3600 + static_cast<std::int64_t>(mi) * 60 + sec) * kMicrosPerSecond +
                 frac};
}

bool Event::notRunAfterTakeover() const {
  return outcome == trace::sqlName(trace::Outcome::OutcomeUnknown) && detail &&
         detail->starts_with(store::kNotRunAfterTakeover);
}

std::string Scope::text() const { return tenant.empty() ? endpoint : tenant + " " + endpoint; }

std::string Scope::label() const { return (service == "default" ? std::string() : "service " + service + ": ") + text(); }

std::optional<Scope> Scope::parse(std::string_view text) {
  auto w = words(text);
  if (w.size() < 2) return std::nullopt;
  std::string method(w[w.size() - 2]);
  for (char& ch : method) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  Scope s;
  s.endpoint = method + " " + std::string(w.back());
  if (w.size() > 2) {
    // The tenant is everything before the method, as written (inner spaces kept).
    const char* begin = w.front().data();
    const char* end = w[w.size() - 3].data() + w[w.size() - 3].size();
    s.tenant.assign(begin, static_cast<std::size_t>(end - begin));
  }
  return s;
}

}  // namespace idem::explain
