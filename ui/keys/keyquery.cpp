#include "ui/keys/keyquery.h"

#include <algorithm>

#include "core/explain/search.h"
#include "core/store/keystore.h"
#include "core/trace/outcome.h"
#include "ui/common/timefmt.h"
#include "ui/keys/filterparams.h"

using namespace Qt::StringLiterals;

namespace idem::ui {
namespace {

// Filters shared by the live and the archive statement. "Executed more than once" counts the
// trace's executions and, as explain does, each done generation: a crash can lose an
// execution's trace row, never its key. Every optional filter is
// "$n IS NULL OR …": libpq's unnamed statements are planned with the parameter values
// known, so the planner folds away the filters that are not set.
constexpr const char* kFilters = R"sql(
      ($2::text IS NULL OR k.endpoint = $2)
  AND ($3::text IS NULL OR k.tier = $3)
  AND ($4::text IS NULL OR k.tenant = $4)
  AND ($5::timestamptz IS NULL OR k.created_at >= $5)
  AND ($6::timestamptz IS NULL OR k.created_at < $6)
  AND ($7::int IS NULL OR (k.resp_status >= $7 AND k.resp_status < $7 + 100))
  AND ($8::text IS NULL OR k.idem_key = $8)
  AND ($9::text IS NULL OR k.idem_key LIKE $9)
  AND ($10::text IS NULL OR k.resource_ref = $10)
  AND ($14::text IS NULL OR k.service = $14)
  AND %1
)sql";

// "Executed more than once": spelled out only when asked for, so that the other views never
// name (and so never wait for a lock on) tables they do not read. @EXECUTIONS@ becomes the
// execution outcomes as literals: the planner matches them to the partial index
// events_executions (a bound array would not), and a store test holds the index to the list.
constexpr const char* kRanMoreThanOnce = R"sql($11::bool
  AND ((SELECT count(*) FROM idem.events e
         WHERE e.tenant = k.tenant AND e.endpoint = k.endpoint AND e.idem_key = k.idem_key AND e.service = k.service
           AND e.outcome IN (@EXECUTIONS@) AND NOT (e.outcome = 'outcome_unknown' AND e.detail LIKE '@NOT_RUN@%')) > 1
       OR (SELECT count(*) FROM idem.keys l
            WHERE l.tenant = k.tenant AND l.endpoint = k.endpoint AND l.idem_key = k.idem_key AND l.service = k.service
              AND l.state = 'done')
        + (SELECT count(*) FROM idem.key_archive a
            WHERE a.tenant = k.tenant AND a.endpoint = k.endpoint AND a.idem_key = k.idem_key AND a.service = k.service
              AND a.state = 'done') > 1))sql";

constexpr const char* kLiveSql = R"sql(
SELECT k.tenant, k.endpoint, k.idem_key, k.service, k.generation, k.tier, k.state, k.resp_status, k.resource_ref,
       extract(epoch FROM k.created_at)::text AS created, extract(epoch FROM k.expires_at)::text AS expires,
       extract(epoch FROM k.lease_until)::text AS lease_until, NULL::text AS archived_at,
       (%1)::text AS sort_value, %1 AS sort_key
  FROM idem.keys k
 WHERE %2
   AND (NOT $12::bool OR (k.state = 'processing' AND k.lease_until < now()))
   AND ($13::text = 'all'
        OR ($13 = 'processing' AND k.state = 'processing' AND k.expires_at >= now())
        OR ($13 = 'done' AND k.state = 'done' AND k.expires_at >= now())
        OR ($13 = 'expired' AND k.expires_at < now()))
   AND ($15::text IS NULL OR (%3))
   AND %5
 ORDER BY %4
 LIMIT $1
)sql";

// The archive keeps one row per earlier generation, so the generation completes the key.
// A stuck lease cannot be archived history: that filter matches no archive row.
constexpr const char* kArchiveSql = R"sql(
SELECT k.tenant, k.endpoint, k.idem_key, k.service, k.generation, k.tier, k.state, k.resp_status, k.resource_ref,
       extract(epoch FROM k.created_at)::text AS created, extract(epoch FROM k.expires_at)::text AS expires,
       NULL::text AS lease_until, extract(epoch FROM k.archived_at)::text AS archived_at,
       (%1)::text AS sort_value
  FROM idem.key_archive k
 WHERE %2
   AND NOT $12::bool
   AND $13::text = 'archived'
   AND ($15::text IS NULL OR (%3))
   AND %5
 ORDER BY %4
 LIMIT $1
)sql";

struct SortSpec {
  const char* expr;
  const char* type;
};

SortSpec sortSpec(SortColumn c) {
  switch (c) {
    case SortColumn::Key: return {"k.idem_key", "text"};
    case SortColumn::Scope: return {"k.tenant", "text"};
    case SortColumn::Generation: return {"k.generation", "int"};
    case SortColumn::State: return {"k.state", "text"};
    case SortColumn::Status: return {"coalesce(k.resp_status, 0)", "int"};
    case SortColumn::Created: return {"k.created_at", "timestamptz"};
    case SortColumn::Expires: return {"k.expires_at", "timestamptz"};
  }
  return {"k.expires_at", "timestamptz"};
}

// Status, state and generation have a handful of values and no index that leads with them on
// every key: such an index would cost every new key an entry at its claim. Their order is read
// as branches of a UNION ALL, each in an index's order and at most a page long, so the outer
// sort sees a few pages, not the table (status took 3.1 s at 10 M keys):
//  - keys in flight (state processing): their own partial index, few enough to sort;
//  - done keys by status: migration 0023's keys_done_status, written at completion only;
//  - a value nearly every row has (generation 1, state done): the primary key's order, since
//    every row of the branch has the same sort value;
//  - the rest (generations past 1): a partial index a new key never enters.
enum class BranchState { Any, Processing, Done };
struct SortBranch {
  const char* predicate;
  BranchState state = BranchState::Any;
  std::optional<int> constant;            // the sort value every row of the branch has, if one
  const char* stateConstant = nullptr;    // the same for the state column
};

std::vector<SortBranch> sortBranches(SortColumn c) {
  using enum BranchState;
  switch (c) {
    case SortColumn::Status:
      return {{"k.state = 'processing'", Processing, std::nullopt, nullptr},
              // The status class again on the index's expression: a range of the index, not a
              // filter over every status before it.
              {"k.state = 'done' AND ($7::int IS NULL OR (coalesce(k.resp_status, 0) >= $7 AND "
               "coalesce(k.resp_status, 0) < $7 + 100))",
               Done, std::nullopt, nullptr}};
    case SortColumn::Generation:
      return {{"k.generation <> 1", Any, std::nullopt, nullptr}, {"k.generation = 1", Any, 1, nullptr}};
    case SortColumn::State:
      return {{"k.state = 'processing'", Processing, std::nullopt, "processing"},
              {"k.state = 'done'", Done, std::nullopt, "done"}};
    default:
      return {};
  }
}

// A branch the filter empties is left out: the planner does not see that "in flight" and
// "done" exclude each other, and would walk a whole index looking for a row.
bool filterRulesOut(const SortBranch& b, const KeyFilter& f) {
  if (b.state == BranchState::Processing && f.state == KeyState::Done) return true;
  return b.state == BranchState::Done && (f.state == KeyState::Processing || f.stuckProcessing);
}

// Where a branch whose rows all carry one sort value stands against the cursor's value, in the
// walk's direction: before it (nothing left to read), at it (continue after the cursor's key),
// or after it (read from the start).
enum class BranchPlace { Before, At, After };
BranchPlace placeOf(const SortBranch& b, const std::string& cursorValue, bool descending) {
  int cmp = 0;
  if (b.constant) {
    bool ok = false;
    const int cursor = QByteArray::fromStdString(cursorValue).toInt(&ok);
    if (!ok) return BranchPlace::After;  // not a number: let the row comparison decide
    cmp = *b.constant < cursor ? -1 : (*b.constant > cursor ? 1 : 0);
  } else {
    cmp = std::string(b.stateConstant).compare(cursorValue);
    cmp = cmp < 0 ? -1 : (cmp > 0 ? 1 : 0);
  }
  if (descending) cmp = -cmp;
  return cmp < 0 ? BranchPlace::Before : (cmp == 0 ? BranchPlace::At : BranchPlace::After);
}

const char* stateName(KeyState s) {
  switch (s) {
    case KeyState::All: return "all";
    case KeyState::Processing: return "processing";
    case KeyState::Done: return "done";
    case KeyState::Expired: return "expired";
    case KeyState::Archived: return "archived";
  }
  return "all";
}

pg::Param statusBase(StatusClass s) {
  switch (s) {
    case StatusClass::Any: return pg::Param::null();
    case StatusClass::S2xx: return 200;
    case StatusClass::S4xx: return 400;
    case StatusClass::S5xx: return 500;
  }
  return pg::Param::null();
}
QString col(const pg::Result& r, int row, const char* name) { return QString::fromUtf8(r.text(row, r.column(name))); }

static_assert(store::kNotRunAfterTakeover.find_first_of("'%_\\") == std::string_view::npos,
              "spliced into a LIKE pattern in single quotes");

QString ranMoreThanOnce() {
  return QString::fromLatin1(kRanMoreThanOnce)
      .replace(u"@EXECUTIONS@"_s, QString::fromStdString(trace::sqlLiterals(trace::isExecution)))
      // The row a taken-over key stored for its stopped holder without running it again is no
      // second execution (explain's Event::notRunAfterTakeover). A constant (checked above), like the outcomes.
      .replace(u"@NOT_RUN@"_s, QString::fromLatin1(store::kNotRunAfterTakeover.data(),
                                                    static_cast<qsizetype>(store::kNotRunAfterTakeover.size())));
}

}  // namespace

KeyCursor KeyCursor::of(const KeyRow& row) {
  return {row.sortValue,          row.tenant.toStdString(),  row.endpoint.toStdString(), row.key.toStdString(),
          row.service.toStdString(), row.generation};
}

std::string likePrefixPattern(const QString& prefix) { return explain::likePrefixPattern(prefix.toStdString()); }

std::vector<KeyRow> fetchKeyPage(pg::Connection& conn, const KeyFilter& f, const std::optional<KeyCursor>& from,
                                 bool backward, int limit) {
  const bool archive = f.state == KeyState::Archived;
  const SortSpec sort = sortSpec(f.sort);
  // Walking backward reverses the order and the comparison; rows are reversed below.
  const bool descending = f.descending != backward;
  const QString dir = descending ? u" DESC"_s : u" ASC"_s;
  const QString op = descending ? u"<"_s : u">"_s;
  const QString expr = QLatin1String(sort.expr);
  // The keyset: the rows after the cursor in this order, the key completing the sort value.
  QString first = u"(%1)"_s.arg(expr);
  QString firstParam = u"$15::"_s + QLatin1String(sort.type);
  QString order = expr + dir;
  QString range;
  if (f.sort == SortColumn::Key) {
    // The key is ordered in its text_pattern_ops index (keys_idem_key_pattern, also the prefix
    // filter's): byte order, the order of ~<~ and of COLLATE "C". A default-collation ORDER BY
    // could use no index and sorted every key. The redundant range makes the cursor an index
    // condition.
    first = u"k.idem_key COLLATE \"C\""_s;
    firstParam = u"$15::text COLLATE \"C\""_s;
    order = descending ? u"k.idem_key USING ~>~"_s : u"k.idem_key USING ~<~"_s;
    range = descending ? u" AND k.idem_key ~<=~ $15"_s : u" AND k.idem_key ~>=~ $15"_s;
  }
  // The service completes the key (schema 25): two services may hold one tenant, endpoint and key.
  const QString keyset =
      archive ? u"(%1, k.tenant, k.endpoint, k.idem_key, k.generation, k.service) %2 (%3, $16, $17, $18, $20::int, $19)%4"_s
                    .arg(first, op, firstParam, range)
              : u"(%1, k.tenant, k.endpoint, k.idem_key, k.service) %2 (%3, $16, $17, $18, $19)%4"_s.arg(
                    first, op, firstParam, range);
  if (f.keyPrefix && !f.key.isEmpty() && f.sort != SortColumn::Key) {
    // A key prefix is one range of the key index, but its keys bunch in the other orders:
    // they share a format, so an endpoint ('cart-…' keys are orders), so a TTL, so a corner of
    // the expires order. Walking the sort column's index and filtering read 7.5 million rows
    // for a 28k-key prefix at 10 M keys (22 s), while the planner, assuming an even spread,
    // expected 72k. An expression no index provides makes it take the prefix's rows and sort
    // them: bounded by how many keys the prefix matches.
    if (qstrcmp(sort.type, "timestamptz") == 0)
      order = u"(%1 + interval '0 s')"_s.arg(expr) + dir;
    else if (qstrcmp(sort.type, "int") == 0)
      order = u"(%1 + 0)"_s.arg(expr) + dir;
    else
      order = u"(%1 || '')"_s.arg(expr) + dir;
  }
  const QString keyOrder =
      u"k.tenant"_s + dir + u", k.endpoint"_s + dir + u", k.idem_key"_s + dir + (archive ? u""_s : u", k.service"_s + dir);
  order += u", "_s + keyOrder;
  if (archive) order += u", k.generation"_s + dir + u", k.service"_s + dir;
  const QString filters =
      QString::fromLatin1(kFilters).arg(f.executedMoreThanOnce ? ranMoreThanOnce() : u"NOT $11::bool"_s);
  const auto branches = (archive || (f.keyPrefix && !f.key.isEmpty())) ? std::vector<SortBranch>{} : sortBranches(f.sort);
  QString sql;
  if (branches.empty()) {
    sql = QString::fromLatin1(archive ? kArchiveSql : kLiveSql).arg(expr, filters, keyset, order, u"true"_s);
  } else {
    // Each branch reads at most a page in its own index order; the outer sort merges them.
    QStringList parts;
    for (const SortBranch& b : branches) {
      if (filterRulesOut(b, f)) continue;
      QString predicate = QLatin1String(b.predicate);
      QString branchOrder = b.constant || b.stateConstant ? keyOrder : order;
      if (from && (b.constant || b.stateConstant)) {
        const BranchPlace place = placeOf(b, from->sortValue, descending);
        if (place == BranchPlace::Before) continue;
        // The same rows as the full comparison, spelled so the primary key's index can seek.
        if (place == BranchPlace::At)
          predicate += u" AND (k.tenant, k.endpoint, k.idem_key, k.service) %1 ($16, $17, $18, $19)"_s.arg(op);
      }
      parts << u"(%1)"_s.arg(QString::fromLatin1(kLiveSql).arg(expr, filters, keyset, branchOrder, predicate));
    }
    if (parts.isEmpty()) return {};
    const QString outerOrder =
        u"sort_key"_s + dir + u", tenant"_s + dir + u", endpoint"_s + dir + u", idem_key"_s + dir + u", service"_s + dir;
    sql = u"SELECT * FROM (%1) page ORDER BY %2 LIMIT $1"_s.arg(parts.join(u"\n UNION ALL\n"_s), outerOrder);
  }
  std::vector<pg::Param> params{
      limit,
      optText(f.endpoint),
      optText(f.tier),
      optText(f.tenant),
      optTime(f.createdFrom),
      optTime(f.createdTo),
      statusBase(f.status),
      f.keyPrefix ? pg::Param::null() : optText(f.key),
      (f.keyPrefix && !f.key.isEmpty()) ? pg::Param(likePrefixPattern(f.key)) : pg::Param::null(),
      optText(f.resourceRef),
      f.executedMoreThanOnce ? "true" : "false",
      f.stuckProcessing ? "true" : "false",
      stateName(f.state),
      optText(f.service),
  };
  if (from) {
    params.insert(params.end(), {from->sortValue, from->tenant, from->endpoint, from->key, from->service});
    if (archive) params.emplace_back(from->generation);
  } else {
    params.insert(params.end(),
                  {pg::Param::null(), pg::Param::null(), pg::Param::null(), pg::Param::null(), pg::Param::null()});
    if (archive) params.emplace_back(pg::Param::null());
  }
  auto r = conn.exec(sql.toStdString(), params);
  std::vector<KeyRow> rows;
  rows.reserve(static_cast<std::size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    KeyRow row;
    row.tenant = col(r, i, "tenant");
    row.endpoint = col(r, i, "endpoint");
    row.key = col(r, i, "idem_key");
    row.service = col(r, i, "service");
    row.generation = static_cast<int>(r.integer(i, "generation"));
    row.tier = col(r, i, "tier");
    row.state = col(r, i, "state");
    row.archived = archive;
    row.status = r.isNull(i, r.column("resp_status")) ? 0 : static_cast<int>(r.integer(i, "resp_status"));
    row.resourceRef = col(r, i, "resource_ref");
    row.created = fromEpochText(r.text(i, r.column("created")));
    row.expires = fromEpochText(r.text(i, r.column("expires")));
    row.leaseUntil = fromEpochText(r.text(i, r.column("lease_until")));
    row.archivedAt = fromEpochText(r.text(i, r.column("archived_at")));
    row.sortValue = r.str(i, "sort_value");
    rows.push_back(std::move(row));
  }
  if (backward) std::reverse(rows.begin(), rows.end());
  return rows;
}

StateCounts fetchStateCounts(pg::Connection& conn) {
  // The partial index keys_processing and keys_expires_at keep these two cheap; the
  // estimates are read in the same statement (one round trip).
  auto r = conn.exec(R"sql(
    SELECT (SELECT count(*) FROM idem.keys WHERE state = 'processing' AND expires_at >= now()) AS processing,
           (SELECT count(*) FROM idem.keys WHERE state = 'processing' AND lease_until < now()) AS stuck,
           (SELECT count(*) FROM idem.keys WHERE expires_at < now()) AS expired,
           (SELECT reltuples::bigint FROM pg_class WHERE oid = 'idem.keys'::regclass) AS keys_est,
           (SELECT reltuples::bigint FROM pg_class WHERE oid = 'idem.key_archive'::regclass) AS archive_est)sql");
  StateCounts c;
  c.processing = r.integer(0, "processing");
  c.stuck = r.integer(0, "stuck");
  c.expired = r.integer(0, "expired");
  const qint64 keysEst = r.integer(0, "keys_est");
  const qint64 archiveEst = r.integer(0, "archive_est");
  // reltuples is -1 before the first VACUUM/ANALYZE: then count.
  if (keysEst >= kExactCountLimit) {
    c.done = std::max<qint64>(0, keysEst - c.processing - c.expired);
    c.doneEstimated = true;
  } else {
    c.done = conn.exec("SELECT count(*) AS n FROM idem.keys WHERE state = 'done' AND expires_at >= now()")
                 .integer(0, "n");
  }
  if (archiveEst >= kExactCountLimit) {
    c.archived = archiveEst;
    c.archivedEstimated = true;
  } else {
    c.archived = conn.exec("SELECT count(*) AS n FROM idem.key_archive").integer(0, "n");
  }
  return c;
}

std::vector<KeyHit> searchKeys(pg::Connection& conn, const QString& input, int limit) {
  std::vector<KeyHit> hits;
  // Core's search, the one `idemctl explain` uses: a key or a resource id, else a prefix.
  for (const auto& m : explain::searchKeys(conn, input.trimmed().toStdString(),
                                           explain::SearchOptions{true, true, true, limit})) {
    const QString how = m.by == explain::KeyMatch::By::Prefix ? u"prefix"_s
                        : m.by == explain::KeyMatch::By::Resource ? u"resource"_s
                                                                   : u"key"_s;
    hits.push_back({QString::fromStdString(m.ref.scope.tenant), QString::fromStdString(m.ref.scope.endpoint),
                    QString::fromStdString(m.ref.key), QString::fromStdString(m.ref.scope.service), m.generation, m.archived,
                    QString::fromStdString(m.resourceRef), how});
  }
  return hits;
}

}  // namespace idem::ui
