#pragma once
// The detail tabs' SQL, in one place: a key's generations and events (worker threads only),
// and core's explanation of them.
#include "core/store/pg.h"
#include "ui/keydata/keydetail.h"

namespace idem::ui {

/// Events beyond this many are not loaded (the trace says so).
inline constexpr int kMaxTraceEvents = 20000;
/// Events listed in the Explain tab's Markdown (the Trace tab shows them all).
inline constexpr std::size_t kMaxExplainedEvents = 200;

/// Loads every generation and event of the key, explained with its times in zone; an unknown
/// key gives empty lists.
[[nodiscard]] KeyDetail loadKeyDetail(pg::Connection& conn, const KeyRef& ref, const text::TimeZone& zone = {});
/// detail with its times in zone: detail itself when it already is (or holds no key), else a
/// copy explained again (the agent changed the zone shown): the same history, no database.
[[nodiscard]] SharedKeyDetail explainedInZone(SharedKeyDetail detail, const text::TimeZone& zone);

}  // namespace idem::ui
