#pragma once
// The key browser's SQL, all of it in this one place: keyset pages, state counts and the
// global search. Every value is a bound parameter; only fixed fragments chosen by enum
// (sort column and direction) vary the statement text. Called on worker threads.
#include <optional>
#include <vector>

#include "core/store/pg.h"
#include "ui/keys/keyfilter.h"

namespace idem::ui {

/// One page in the filter's order, starting after `after` (or ending before it when
/// backward; the rows still come in display order). Never OFFSET: cost is independent of
/// how far the user has scrolled.
[[nodiscard]] std::vector<KeyRow> fetchKeyPage(pg::Connection& conn, const KeyFilter& filter,
                                               const std::optional<KeyCursor>& from, bool backward, int limit);

struct StateCounts {
  qint64 processing = 0;
  qint64 done = 0;
  qint64 expired = 0;   ///< past expires_at, awaiting the sweeper
  qint64 archived = 0;
  qint64 stuck = 0;     ///< processing with an expired lease
  bool doneEstimated = false;      ///< from the planner's statistics on large tables
  bool archivedEstimated = false;
};

/// Counts for the sidebar. Small sets are counted exactly (their indexes make it cheap);
/// the large ones come from pg_class.reltuples once a table passes kExactCountLimit rows.
[[nodiscard]] StateCounts fetchStateCounts(pg::Connection& conn);
inline constexpr qint64 kExactCountLimit = 200000;

struct KeyHit {
  QString tenant;
  QString endpoint;
  QString key;
  QString service;
  int generation = 0;
  bool archived = false;
  QString resourceRef;
  QString matchedBy;  ///< "resource", "key" or "prefix"
};

/// The global search: a resource id (pay_…, re_…, ord_…), an exact key, else a key prefix.
[[nodiscard]] std::vector<KeyHit> searchKeys(pg::Connection& conn, const QString& text, int limit = 50);

/// Escapes LIKE's wildcards so the text matches literally, then appends '%'.
[[nodiscard]] std::string likePrefixPattern(const QString& prefix);

}  // namespace idem::ui
