// Backoff curves, jitter and Retry-After handling.
#include "core/sim/backoff.h"

#include <algorithm>
#include <cmath>

namespace idem::sim {

namespace {
// Upper bound on any computed sleep: keeps exponential curves without a cap finite.
constexpr double kMaxSleep = 1e15;

double capped(const Policy& p, double v) {
  v = std::min(v, kMaxSleep);
  return p.cap ? std::min(v, static_cast<double>(*p.cap)) : v;
}

std::optional<double> capOf(const Policy& p) {
  if (!p.cap) return std::nullopt;
  return static_cast<double>(*p.cap);
}
}  // namespace

double backoffCurve(const Policy& p, int retry) {
  const auto base = static_cast<double>(p.base);
  if (p.firstRetryImmediate) {
    if (retry <= 1) return 0;
  }
  double v = 0;
  switch (p.backoff) {
    case Backoff::None:
      v = 0;
      break;
    case Backoff::Constant:
      v = base;
      break;
    case Backoff::Linear:
      v = base * retry;
      break;
    case Backoff::Exponential: {
      v = base;
      for (int i = 1; i < retry && v < kMaxSleep; ++i) v *= p.multiplier;
      break;
    }
  }
  return capped(p, v);
}

double applyJitter(Jitter j, double b, double u) {
  switch (j) {
    case Jitter::Full:
      return u * b;
    case Jitter::Equal:
      return b / 2 + u * (b / 2);
    case Jitter::None:
    case Jitter::Decorrelated:
      break;
  }
  return b;
}

double decorrelatedJitter(double base, std::optional<double> cap, double previous, double u) {
  const double hi = std::max(base, std::min(previous * 3, kMaxSleep));
  const double v = base + u * (hi - base);
  return cap ? std::min(*cap, v) : v;
}

Usec backoffDelay(const Policy& p, int retry, BackoffState& state, Rng& rng) {
  double sleep = 0;
  if (p.jitter == Jitter::Decorrelated) {
    if (p.firstRetryImmediate && retry <= 1) {
      sleep = 0;
    } else {
      const double previous = state.previous < 0 ? static_cast<double>(p.base) : state.previous;
      sleep = decorrelatedJitter(static_cast<double>(p.base), capOf(p), previous, rng.uniform());
      state.previous = sleep;
    }
  } else {
    const double b = backoffCurve(p, retry);
    // No random draw when it cannot matter keeps runs without jitter cheap.
    sleep = (p.jitter == Jitter::None || b == 0) ? b : applyJitter(p.jitter, b, rng.uniform());
  }
  sleep = std::max(sleep, static_cast<double>(p.minDelay));
  return static_cast<Usec>(std::llround(sleep));
}

double backoffUpperBound(const Policy& p, int retry) {
  double upper = 0;
  if (p.jitter == Jitter::Decorrelated) {
    if (p.firstRetryImmediate && retry <= 1) {
      upper = 0;
    } else {
      // Each sleep is at most 3x the previous one (the first previous is base), and at most cap.
      upper = static_cast<double>(p.base);
      const int steps = p.firstRetryImmediate ? retry - 1 : retry;
      for (int i = 0; i < steps && upper < kMaxSleep; ++i) upper = std::min(upper * 3, kMaxSleep);
      upper = std::max(upper, static_cast<double>(p.base));
      if (p.cap) upper = std::min(upper, static_cast<double>(*p.cap));
    }
  } else {
    // none, full and equal jitter never exceed the capped curve value.
    upper = backoffCurve(p, retry);
  }
  return std::max(upper, static_cast<double>(p.minDelay));
}

std::optional<Usec> honouredRetryAfter(const Policy& p, Usec ra) {
  if (p.retryAfter == RetryAfterMode::Ignore) return std::nullopt;
  if (p.retryAfterCap && ra > *p.retryAfterCap) {
    if (p.overCap != OverCap::Clamp) return std::nullopt;  // ignore; give_up never gets here (givesUpOn)
    return *p.retryAfterCap;
  }
  return ra;
}

bool givesUpOn(const Policy& p, Usec ra) {
  return p.retryAfter != RetryAfterMode::Ignore && p.overCap == OverCap::GiveUp && p.retryAfterCap &&
         ra > *p.retryAfterCap;
}

Usec combineWithRetryAfter(const Policy& p, Usec backoff, std::optional<Usec> retryAfter) {
  if (!retryAfter) return backoff;
  if (p.retryAfter == RetryAfterMode::Replace) return *retryAfter;
  return std::max(backoff, *retryAfter);
}

}  // namespace idem::sim
