#pragma once
// The "Suspected duplicates" list's SQL: the trace rows that name another key's execution of the
// same request (idem.events.related_key, docs/policy.md "Duplicates across keys"), newest first,
// with both keys' resources. Served by the partial index events_related (0026). Keyset pages;
// every value a bound parameter. Called on worker threads.
#include <QDateTime>
#include <QString>
#include <optional>
#include <vector>

#include "core/store/pg.h"
#include "ui/keys/keyfilter.h"

namespace idem::ui {

/// One pair: the later key's trace row and the earlier key it repeats.
struct DuplicatePair {
  qint64 eventId = 0;
  QDateTime at;       ///< when the later request arrived
  std::string atText; ///< `at` as the server printed it: the keyset cursor, exact to the microsecond
  QString tenant;
  QString endpoint;
  QString service;
  QString key;         ///< the later key (the row's)
  QString earlierKey;  ///< related_key
  QString outcome;     ///< duplicate_observed | duplicate_confirmed | duplicate_held | duplicate_rejected
  QString detail;
  QString laterResource;    ///< "" when the later request stored none (held, refused)
  QString earlierResource;  ///< "" when the earlier key stored none
  QDateTime earlierAt;      ///< the earlier key's claim; invalid when no generation is stored
  /// How long after the earlier execution the repeat came; nullopt when that is unknown.
  [[nodiscard]] std::optional<qint64> gapMs() const;
};

/// A page of pairs matching filter's scope fields (service, endpoint, tier, tenant, the created
/// range applied to the repeat's time, the key as either key of the pair), newest first,
/// starting after `after`.
[[nodiscard]] std::vector<DuplicatePair> fetchDuplicatePage(pg::Connection& conn, const KeyFilter& filter,
                                                            const std::optional<DuplicatePair>& after, int limit);

}  // namespace idem::ui
