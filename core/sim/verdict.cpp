#include "core/sim/verdict.h"

#include "core/sim/report.h"
#include "core/text/numbers.h"

namespace idem::sim {
using text::fixed;
using text::withThousands;

std::string humanSeconds(double s) {
  if (s >= 7200) return fixed(s / 3600, 1) + " h";
  if (s >= 120) return fixed(s / 60, 1) + " min";
  if (s >= 1) return fixed(s, 2) + " s";
  return fixed(s * 1000, 0) + " ms";
}

Verdict verdictOf(const Result& r) {
  Verdict v;
  const std::string horizon = r.horizon.value ? humanSeconds(toSeconds(*r.horizon.value)) : std::string("unbounded");
  const std::string ttl = humanSeconds(toSeconds(r.config.store.ttl + r.config.store.purgeLag));
  if (r.duplicates > 0) {
    v.exposure = Exposure::ChargedTwice;
    v.headline = "charges twice: " + withThousands(r.duplicates) + " duplicates in " + withThousands(r.operations) +
                 " operations = " + fixed(r.duplicatesPerMillion(), 1) + " per million";
    v.detail = "(" + withThousands(r.duplicatesAfterPurge) + " after the key's TTL" +
               (r.duplicatesNewKey > 0 ? ", " + withThousands(r.duplicatesNewKey) + " under a new key" : std::string()) +
               "). Retry horizon " + horizon + " vs TTL " + ttl + ".";
  } else if (expiryDuplicatesPossible(r)) {
    v.exposure = Exposure::CanChargeTwice;
    v.headline = "did not charge twice in this run, but it can:";
    v.detail = r.horizon.value ? "its retry horizon " + horizon + " reaches the TTL " + ttl + "."
                               : "its retries have no time limit, so one can come after the TTL " + ttl + ".";
  } else {
    v.exposure = Exposure::CannotChargeTwice;
    v.headline = "cannot charge twice through expiry:";
    v.detail = "its last retry comes within " + horizon + ", before the TTL " + ttl + " ends.";
  }
  if (r.counterpart) {
    const bool withDetection = r.counterpart->mode != CrossKey::Mode::Off;
    v.detail += std::string(withDetection ? " With cross-key detection (hold): " : " Without cross-key detection: ") +
                withThousands(r.counterpart->duplicates) + " duplicates.";
  }
  v.detail += " Amplification " + fixed(r.amplification(), 2) + ", success " + fixed(100 * r.successRate(), 2) + " %" +
              ".";
  if (r.recovery)
    v.detail += r.recovery->recoveredAfterS ? " Recovered " + humanSeconds(*r.recovery->recoveredAfterS) + " after the event."
                                            : std::string(" Never recovered after the event.");
  return v;
}

std::string verdictLine(const Result& r) {
  const Verdict v = verdictOf(r);
  return v.headline + " " + v.detail;
}

}  // namespace idem::sim
