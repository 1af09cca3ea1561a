#pragma once
// The simulator's own pseudo-random numbers: the same seed gives the same run on every
// platform and standard library (std:: distributions are implementation-defined).
#include <cmath>
#include <cstdint>

namespace idem::sim {

/// SplitMix64 (Steele, Lea, Flood 2014): expands one 64-bit seed into well-mixed state words.
class SplitMix64 final {
 public:
  explicit SplitMix64(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t m_state;
};

/// xoshiro256** 1.0 (Blackman, Vigna 2018), seeded through SplitMix64 as its authors advise.
class Rng final {
 public:
  explicit Rng(std::uint64_t seed) {
    SplitMix64 sm(seed);
    for (auto& word : m_s) word = sm.next();
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(m_s[1] * 5, 7) * 9;
    const std::uint64_t t = m_s[1] << 17;
    m_s[2] ^= m_s[0];
    m_s[3] ^= m_s[1];
    m_s[1] ^= m_s[2];
    m_s[0] ^= m_s[3];
    m_s[2] ^= t;
    m_s[3] = rotl(m_s[3], 45);
    return result;
  }

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// True with probability p.
  bool chance(double p) { return p > 0 && uniform() < p; }
  /// Exponential with the given mean (inverse transform; 1 - u is never 0).
  double exponential(double mean) { return -mean * std::log(1.0 - uniform()); }

  /// Standard normal (Marsaglia's polar method; the spare value is kept for the next call).
  double normal() {
    if (m_hasSpare) {
      m_hasSpare = false;
      return m_spare;
    }
    double u = 0;
    double v = 0;
    double s = 0;
    do {
      u = uniform(-1.0, 1.0);
      v = uniform(-1.0, 1.0);
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    m_spare = v * f;
    m_hasSpare = true;
    return u * f;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t m_s[4]{};
  double m_spare = 0;
  bool m_hasSpare = false;
};

}  // namespace idem::sim
