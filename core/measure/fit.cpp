// Policy fitting from measured sleeps. The jitter is read from the spread of each retry's
// sleeps (none: all alike; equal: the shortest about half the longest; full: down to ~0),
// then the un-jittered curve value from the median (full: 2x, equal: 4/3 x, none: 1x).
#include "core/measure/fit.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/sim/schedule.h"

namespace idem::measure {

namespace {

constexpr double kFlat = 0.1;          // relative spread below this: no jitter
constexpr double kEqualFloor = 0.35;   // min/max above this: equal jitter
constexpr double kSameRatio = 0.15;    // consecutive curve values within 15 %: not growing
constexpr double kImmediate = 0.02;    // a first sleep below 20 ms with later ones longer: urllib3's "no sleep first"

sim::Usec usec(double seconds) { return static_cast<sim::Usec>(std::llround(seconds * 1000.0)) * sim::kUsecPerMs; }

// Per retry, the sleeps of the fault with most samples among those without Retry-After.
std::vector<Spread> plainSleeps(const std::vector<FaultReport>& faults) {
  std::vector<Spread> out;
  for (const auto& f : faults) {
    if (f.retryAfter) continue;
    for (const auto& r : f.retries) {
      const auto n = static_cast<std::size_t>(r.retry);
      if (out.size() < n) out.resize(n);
      if (r.sleep.samples > out[n - 1].samples) out[n - 1] = r.sleep;
    }
  }
  while (!out.empty() && out.back().samples == 0) out.pop_back();
  return out;
}

sim::Jitter jitterOf(const std::vector<Spread>& sleeps, std::size_t from) {
  double spread = 0;
  double floor = 0;
  int n = 0;
  for (std::size_t i = from; i < sleeps.size(); ++i) {
    const auto& s = sleeps[i];
    if (s.samples < 2 || s.max <= 0.005) continue;
    spread += (s.max - s.min) / s.max;
    floor += s.min / s.max;
    ++n;
  }
  if (n == 0 || spread / n < kFlat) return sim::Jitter::None;
  return floor / n > kEqualFloor ? sim::Jitter::Equal : sim::Jitter::Full;
}

double curveValue(sim::Jitter j, const Spread& s) {
  switch (j) {
    case sim::Jitter::Full:
      return 2 * s.p50;
    case sim::Jitter::Equal:
      return s.p50 / 0.75;
    default:
      return s.p50;
  }
}

}  // namespace

sim::Policy fitPolicy(const std::vector<FaultReport>& faults, std::vector<std::string>& notes) {
  sim::Policy p;
  p.preset.clear();
  p.deadline = std::nullopt;
  p.timeout = std::nullopt;
  p.retryOn = 0;
  p.budget = {};
  int maxAttempts = 1;
  for (const auto& f : faults) {
    const auto spec = sim::parseFaultSpec(f.profile);
    if (!spec) continue;
    const unsigned bit = sim::outcomeOf(*spec);
    if (f.attempts.max > 1) {
      p.retryOn |= bit;
      maxAttempts = std::max(maxAttempts, static_cast<int>(std::lround(f.attempts.p50)));
    }
    if (f.attemptLength) p.timeout = usec(f.attemptLength->p50);
  }
  p.maxAttempts = maxAttempts;
  if (!p.timeout) notes.emplace_back("timeout not measured (no 'hang' profile): none assumed");
  if (p.retryOn == 0) {
    notes.emplace_back("no fault was retried: the fit is a single attempt");
    p.backoff = sim::Backoff::None;
    p.jitter = sim::Jitter::None;
    p.base = 0;
    p.cap = std::nullopt;
    p.retryAfter = sim::RetryAfterMode::Ignore;
    p.retryAfterCap = std::nullopt;
    return p;
  }

  const auto sleeps = plainSleeps(faults);
  if (sleeps.empty()) {
    notes.emplace_back("every retried fault sent Retry-After: the backoff curve is not visible");
  } else {
    // urllib3 retries once at once, then backs off; the first retry's sleep says so.
    std::size_t from = 0;
    if (sleeps.size() > 1 && sleeps[0].max < kImmediate && sleeps[1].p50 > kImmediate) {
      p.firstRetryImmediate = true;
      from = 1;
    }
    p.jitter = jitterOf(sleeps, from);
    std::vector<double> b;
    for (std::size_t i = from; i < sleeps.size(); ++i) b.push_back(curveValue(p.jitter, sleeps[i]));
    // A floor hides the curve's first steps: several retries sleeping the same least value
    // while later ones grow (Stripe's "never below 0.5 s").
    std::vector<double> growth;
    std::optional<double> cap;
    for (std::size_t i = 1; i < b.size(); ++i) {
      const double r = b[i] / std::max(b[i - 1], 1e-6);
      if (r > 1 + kSameRatio) {
        growth.push_back(r);
      } else if (!growth.empty()) {
        cap = b[i];
        break;
      }
    }
    if (growth.empty()) {
      p.backoff = b.front() < 0.001 ? sim::Backoff::None : sim::Backoff::Constant;
      p.base = usec(b.front());
      p.cap = std::nullopt;
      if (b.size() < 2) notes.emplace_back("one retry only: a constant sleep fits; the growth is not visible");
    } else {
      double logSum = 0;
      for (double r : growth) logSum += std::log(r);
      const double multiplier = std::exp(logSum / static_cast<double>(growth.size()));
      p.backoff = sim::Backoff::Exponential;
      p.multiplier = std::round(multiplier * 100) / 100;
      // urllib3's curve for retry n >= 2 is base * m^(n-1): the first fitted value is retry 2's.
      p.base = usec(p.firstRetryImmediate ? b.front() / p.multiplier : b.front());
      p.cap = cap ? std::optional<sim::Usec>(usec(*cap)) : std::nullopt;
      if (!cap) notes.emplace_back("no cap reached within the measured retries: uncapped in the fit");
    }
  }

  // Retry-After: obeyed as a floor when every sleep after it was at least as long.
  p.retryAfter = sim::RetryAfterMode::Ignore;
  p.retryAfterCap = std::nullopt;
  bool seen = false;
  for (const auto& f : faults) {
    if (!f.retryAfterHonoured) continue;
    seen = true;
    if (*f.retryAfterHonoured) p.retryAfter = sim::RetryAfterMode::Max;
  }
  if (!seen) notes.emplace_back("Retry-After not measured (no <status>-retry-after-<s> profile retried)");
  notes.emplace_back("retry budgets (quota, throttling) are not visible one operation at a time: none in the fit");
  return p;
}

}  // namespace idem::measure
