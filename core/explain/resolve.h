#pragma once
// explain()'s inner steps, apart so that each file keeps one job: which generation each event
// belongs to, the resolution (resolution.cpp), the duplicates across keys (crosskey.cpp) and the
// customer's words (customer.cpp).
#include <vector>

#include "core/explain/explain.h"

namespace idem::explain {

/// Per event of h.events, the index in h.generations it belongs to: its recorded generation,
/// else (older traces) the generation live at its time; -1 when that generation is not stored.
[[nodiscard]] std::vector<int> eventGenerations(const KeyHistory& h);

/// The duplicates across keys of h (h.crossKey), each with its words in zone.
[[nodiscard]] std::vector<CrossKeyFinding> findCrossKey(const KeyHistory& h, const text::TimeZone& zone);
/// What the duplicates across keys (x.crossKey) add to r: this key's repeat marked
/// SuspectedDuplicate, the refund of the later execution unless the customer meant two, or what
/// the client does after a held one. resolve() calls it last.
void resolveCrossKey(const Explanation& x, Resolution& r);
/// A held (or refused) repeat that the client then resent confirming it was meant: the later
/// confirmed finding of the same pair tells what became of it.
[[nodiscard]] bool confirmedLater(const Explanation& x, const CrossKeyFinding& f);
/// Needs x.history, x.generations, x.crossKey, x.zone and x.cause filled.
[[nodiscard]] Resolution resolve(const Explanation& x, const std::vector<int>& eventGeneration);
/// The execution's amount (Execution::amount), read from its generation's stored response where
/// the policy in force for that generation names the amount (resolve() calls it).
void readAmount(const KeyHistory& h, Execution& e);
/// Needs x.resolution filled as well (with its amounts).
[[nodiscard]] CustomerExplanation tellCustomer(const Explanation& x, Addressee to = Addressee::Merchant);

}  // namespace idem::explain
