#pragma once
// What the key browser asks for: a state, filters, and a sort. Plain values, copied to the
// worker thread with each page request.
#include <QDateTime>
#include <QString>
#include <optional>

namespace idem::ui {

/// The sidebar's states. Live states are disjoint: Processing and Done hold keys not yet
/// past expires_at; Expired holds keys past expires_at that the sweeper has not archived.
enum class KeyState { All, Processing, Done, Expired, Archived };

enum class StatusClass { Any, S2xx, S4xx, S5xx };

/// Sortable columns; the key (tenant, endpoint, key[, generation], service) always breaks ties.
enum class SortColumn { Key, Scope, Generation, State, Status, Created, Expires };

struct KeyFilter {
  KeyState state = KeyState::All;
  QString endpoint;             ///< exact 'POST /v1/payments'; empty = any
  QString tier;
  QString tenant;
  std::optional<QDateTime> createdFrom;  ///< inclusive
  std::optional<QDateTime> createdTo;    ///< exclusive
  StatusClass status = StatusClass::Any;
  QString key;                  ///< exact key, or prefix when keyPrefix
  bool keyPrefix = false;
  QString resourceRef;          ///< exact 'pay_…'
  QString service;              ///< exact service name; empty = every service sharing the store
  bool executedMoreThanOnce = false;
  bool stuckProcessing = false; ///< processing with lease_until in the past
  /// Lists the suspected duplicates across keys (duplicatesview.h) instead of keys: the scope
  /// fields above narrow them, the key matches either key of a pair.
  bool suspectedDuplicates = false;
  SortColumn sort = SortColumn::Expires;
  bool descending = true;

  bool operator==(const KeyFilter&) const = default;
};

/// One row of the key table: a live key or an archived generation.
struct KeyRow {
  QString tenant;
  QString endpoint;
  QString key;
  QString service;
  int generation = 0;
  QString tier;
  QString state;        ///< processing | done | archived state for archive rows
  bool archived = false;
  int status = 0;       ///< 0 = no response stored
  QString resourceRef;
  QDateTime created;
  QDateTime expires;
  QDateTime leaseUntil;
  QDateTime archivedAt;
  std::string sortValue;  ///< the sort column as the server printed it: the keyset cursor
};

/// Where a page starts: after (or before) this row in the current order.
struct KeyCursor {
  std::string sortValue;
  std::string tenant;
  std::string endpoint;
  std::string key;
  std::string service;
  int generation = 0;
  [[nodiscard]] static KeyCursor of(const KeyRow& row);
};

}  // namespace idem::ui
