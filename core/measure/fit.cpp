// Policy fitting from measured sleeps. The jitter is read from how far each retry's shortest
// sleep lies below its median (none: alike; equal: about 2/3 of it; full: down towards 0), the
// min and the median being what a busy machine disturbs least; then the un-jittered curve value
// from the median (full: 2x, equal: 4/3 x, none: 1x). A floor (Stripe's "never below 0.5 s")
// shows as flat first retries before jittered later ones.
#include "core/measure/fit.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/measure/compare.h"
#include "core/sim/schedule.h"

namespace idem::measure {

namespace {

constexpr double kFlat = 0.9;         // min/median above this: no jitter
constexpr double kEqualFloor = 0.45;  // min/median above this: equal jitter
constexpr double kSameRatio = 0.15;   // consecutive curve values within 15 %: not growing
constexpr double kImmediate = 0.02;   // a first sleep below 20 ms, later ones longer: urllib3's "no sleep first"
constexpr double kTiny = 0.005;       // sleeps below 5 ms say nothing about jitter

sim::Usec usec(double seconds) { return static_cast<sim::Usec>(std::llround(seconds * 1000.0)) * sim::kUsecPerMs; }

// Per retry, the sleeps of every fault without Retry-After pooled: the least min, the greatest
// max, the medians averaged by sample count (a median of 12 jittered sleeps alone is noisy),
// and each fault's own max, whose median estimates a jittered curve's top.
struct Pooled {
  Spread s;
  std::vector<double> maxima;
  double perFault = 0;  // samples per fault, for the max's bias
};

std::vector<Pooled> plainSleeps(const std::vector<FaultReport>& faults) {
  std::vector<Pooled> out;
  for (const auto& f : faults) {
    // Retry-After sets the sleep; after a hang a client may sleep holding the old connection
    // open (urllib3), so the server sees no gap at all.
    if (f.retryAfter || f.attemptLength) continue;
    for (const auto& r : f.retries) {
      const auto n = static_cast<std::size_t>(r.retry);
      if (out.size() < n) out.resize(n);
      if (r.sleep.samples == 0) continue;
      Spread& s = out[n - 1].s;
      const double total = s.samples + r.sleep.samples;
      s.min = s.samples == 0 ? r.sleep.min : std::min(s.min, r.sleep.min);
      s.max = s.samples == 0 ? r.sleep.max : std::max(s.max, r.sleep.max);
      s.p50 = (s.p50 * s.samples + r.sleep.p50 * r.sleep.samples) / total;
      s.samples = static_cast<int>(total);
      out[n - 1].maxima.push_back(r.sleep.max);
      out[n - 1].perFault = total / static_cast<double>(out[n - 1].maxima.size());
    }
  }
  while (!out.empty() && out.back().s.samples == 0) out.pop_back();
  return out;
}

bool flat(const Spread& s) { return s.samples < 2 || s.p50 <= kTiny || std::max(0.0, s.min) / s.p50 > kFlat; }

sim::Jitter jitterOf(const std::vector<Pooled>& sleeps, std::size_t from) {
  double floor = 0;
  int n = 0;
  for (std::size_t i = from; i < sleeps.size(); ++i) {
    const auto& s = sleeps[i].s;
    if (s.samples < 2 || s.p50 <= kTiny) continue;
    floor += std::max(0.0, s.min) / s.p50;
    ++n;
  }
  if (n == 0 || floor / n > kFlat) return sim::Jitter::None;
  return floor / n > kEqualFloor ? sim::Jitter::Equal : sim::Jitter::Full;
}

// The un-jittered curve value: the median sleep without jitter; with jitter the top of the
// uniform range, either from the median (full: 2x, equal: 4/3 x) or from the median of the
// faults' maxima (a sample of k uniforms reaches k/(k+1) of the top on average). A late attempt
// spoils the maxima, a small sample the median: fitPolicy tries both.
double curveValue(sim::Jitter j, const Pooled& p, bool fromMaxima) {
  if (j == sim::Jitter::None || p.maxima.empty()) return p.s.p50;
  if (!fromMaxima) return j == sim::Jitter::Full ? 2 * p.s.p50 : p.s.p50 / 0.75;
  std::vector<double> m = p.maxima;
  std::sort(m.begin(), m.end());
  const double median = m.size() % 2 ? m[m.size() / 2] : (m[m.size() / 2 - 1] + m[m.size() / 2]) / 2;
  return median * (p.perFault + 1) / std::max(1.0, p.perFault);
}

// The curve from sleeps[from..] under jitter j: constant, or exponential with the mean growth
// until it stops (the cap).
void fitCurve(sim::Policy& p, const std::vector<Pooled>& sleeps, std::size_t from, std::vector<std::string>& notes,
              bool fromMaxima = true) {
  std::vector<double> b;
  for (std::size_t i = from; i < sleeps.size(); ++i) b.push_back(curveValue(p.jitter, sleeps[i], fromMaxima));
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
    return;
  }
  double logSum = 0;
  for (double r : growth) logSum += std::log(r);
  p.backoff = sim::Backoff::Exponential;
  // To the nearest 0.5: every library measured doubles, and two or three noisy ratios say less
  // than that.
  p.multiplier = std::max(1.5, std::round(std::exp(logSum / static_cast<double>(growth.size())) * 2) / 2);
  // With the first retry immediate (urllib3) retry n >= 2 sleeps base * m^(n-1): b[0] is retry 2's.
  p.base = usec(p.firstRetryImmediate ? b.front() / p.multiplier : b.front());
  p.cap = cap ? std::optional<sim::Usec>(usec(*cap)) : std::nullopt;
  if (!cap) notes.emplace_back("no cap reached within the measured retries: uncapped in the fit");
}

// Retry-After: obeyed as a floor when every sleep after it was at least as long.
void fitRetryAfter(sim::Policy& p, const std::vector<FaultReport>& faults, std::vector<std::string>& notes) {
  p.retryAfter = sim::RetryAfterMode::Ignore;
  p.retryAfterCap = std::nullopt;
  bool seen = false;
  for (const auto& f : faults) {
    if (!f.retryAfterHonoured) continue;
    seen = true;
    if (*f.retryAfterHonoured) p.retryAfter = sim::RetryAfterMode::Max;
  }
  if (!seen) notes.emplace_back("Retry-After not measured (no <status>-retry-after-<s> profile retried)");
}

// The jitter shapes are coarse (a library adding 0-20 % sits between "none" and "equal"), so
// the estimate and its neighbours (each jitter shape; base ±5 %, ±10 %, ±25 %, -50 %) are held to the
// measurement as the presets are (compare.h), and the one with fewest misses wins; ties keep
// the estimate.
int misses(const sim::Policy& p, const std::vector<FaultReport>& faults) {
  int n = 0;
  for (const auto& c : compareSchedule(p, faults)) n += c.ok ? 0 : 1;
  return n;
}

sim::Policy bestNeighbour(const sim::Policy& estimate, const std::vector<FaultReport>& faults) {
  const auto misses = [&](const sim::Policy& p) { return measure::misses(p, faults); };
  sim::Policy best = estimate;
  int fewest = misses(estimate);
  // Doubling is every measured library's multiplier: tried beside the (noisier) estimate.
  for (const double multiplier : {estimate.multiplier, 2.0})
    for (const auto j : {sim::Jitter::None, sim::Jitter::Equal, sim::Jitter::Full}) {
      for (const double scale : {1.0, 0.95, 1.05, 0.9, 1.1, 0.75, 1.25, 0.5}) {
        if (fewest == 0) return best;
        sim::Policy p = estimate;
        p.multiplier = multiplier;
        // Keep the curve's median where it was measured: full jitter's median is half the
        // curve, equal jitter's three quarters.
        const auto medianShare = [](sim::Jitter x) {
          return x == sim::Jitter::Full ? 0.5 : x == sim::Jitter::Equal ? 0.75 : 1.0;
        };
        p.jitter = j;
        p.base = usec(sim::toSeconds(estimate.base) * medianShare(estimate.jitter) / medianShare(j) * scale);
        if (const int m = misses(p); m < fewest) {
          best = p;
          fewest = m;
        }
      }
    }
  return best;
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
    if (f.attempts.max > 1) {
      p.retryOn |= sim::outcomeOf(*spec);
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
    std::size_t from = 0;
    if (sleeps.size() > 1 && sleeps[0].s.p50 < kImmediate && sleeps[1].s.p50 > kImmediate) {
      p.firstRetryImmediate = true;
      from = 1;
    }
    // Flat first retries, jittered later ones: a floor, its value the flat sleep; the curve is
    // read from the jittered retries and assumed to double below the floor.
    std::size_t floored = from;
    while (floored + 1 < sleeps.size() && flat(sleeps[floored].s)) ++floored;
    if (floored > from && !flat(sleeps[floored].s)) {
      p.minDelay = usec(sleeps[from].s.p50);
      p.jitter = jitterOf(sleeps, floored);
      fitCurve(p, sleeps, floored, notes);
      if (p.backoff != sim::Backoff::Exponential) {
        p.backoff = sim::Backoff::Exponential;
        p.multiplier = 2;
      }
      p.base = usec(sim::toSeconds(p.base) / std::pow(p.multiplier, static_cast<double>(floored - from)));
      notes.emplace_back("the first " + std::to_string(floored - from) +
                         " sleep(s) sit on a floor (min_delay); the curve below it is assumed to double");
      p = bestNeighbour(p, faults);
    } else {
      p.jitter = jitterOf(sleeps, from);
      sim::Policy byMedian = p;
      std::vector<std::string> medianNotes = notes;
      fitCurve(p, sleeps, from, notes);
      fitCurve(byMedian, sleeps, from, medianNotes, /*fromMaxima=*/false);
      p = bestNeighbour(p, faults);
      byMedian = bestNeighbour(byMedian, faults);
      if (misses(byMedian, faults) < misses(p, faults)) {
        p = byMedian;
        notes = medianNotes;
      }
    }
  }
  fitRetryAfter(p, faults, notes);
  notes.emplace_back("retry budgets (quota, throttling) are not visible one operation at a time: none in the fit");
  return p;
}

}  // namespace idem::measure
