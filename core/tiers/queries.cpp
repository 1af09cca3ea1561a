#include "core/tiers/queries.h"

#include <algorithm>
#include <cstdio>

#include "core/policy/duration.h"
#include "core/trace/outcome.h"

namespace idem::tiers::internal {
namespace {

// The retry offsets, shared by the statistics and the what-if counts so that both measure the
// same thing. $1: the period (interval back from now()); $2: one tier, or NULL for all; $3: the
// retry outcomes (retryOutcomes(), from trace::kOutcomes); $5: the service (a tier is a tier of
// one service's policy, and its keys are that service's).
//
// A later request's offset is measured from the first request of its key's generation
// (replayed, conflict, mismatch: the client came back while the record lived). A request that
// found the key expired (executed_after_expiry, rejected_expired) is measured from the key's
// FIRST generation: that is the retry that outran the TTL. An executed_after_expiry event is
// written when the new execution completes, so its arrival is the new generation's created_at.
constexpr const char* kOffsetsCte = R"SQL(
WITH offsets AS (
  SELECT e.tier, e.outcome,
         greatest(0, extract(epoch FROM
           CASE e.outcome
             WHEN 'executed_after_expiry'
               THEN coalesce(o.gen_at, e.at - make_interval(secs => coalesce(e.latency_ms, 0) / 1000)) - o.first_at
             WHEN 'rejected_expired' THEN e.at - o.first_at
             ELSE e.at - coalesce(o.gen_at, o.first_at)
           END) * 1000)::float8 AS off_ms
    FROM idem.events e
    -- Per event, two primary-key probes (live row, archived generations): the cost grows with
    -- the retries in the period, never with the size of the tables, whatever the statistics.
    CROSS JOIN LATERAL (
      SELECT min(g.created_at) AS first_at,
             min(g.created_at) FILTER (WHERE g.generation = e.generation) AS gen_at
        FROM (SELECT k.generation, k.created_at FROM idem.keys k
               WHERE k.tenant = e.tenant AND k.endpoint = e.endpoint AND k.idem_key = e.idem_key
                 AND k.service = e.service
              UNION ALL
              SELECT a.generation, a.created_at FROM idem.key_archive a
               WHERE a.tenant = e.tenant AND a.endpoint = e.endpoint AND a.idem_key = e.idem_key
                 AND a.service = e.service) g
    ) o
    -- A folded storm row stands for `repeats` retries, all counted at its first time (the
    -- spread is one trace batch, ~0.1 s, against offsets of minutes to days).
    CROSS JOIN LATERAL generate_series(1, e.repeats) AS each_repeat
   WHERE e.at >= now() - $1::interval
     AND e.outcome = ANY ($3::text[])
     AND ($2::text IS NULL OR e.tier = $2::text)
     AND e.service = $5::text
     AND o.first_at IS NOT NULL
)
)SQL";

// Per tier: the percentiles, the count of each retry outcome and the first executions ($4:
// 'executed'). @COUNTS@ becomes one streaming count per retry outcome, n_<i> for ($3)[i], and
// @COLUMNS@ selects them.
constexpr const char* kStatsSelect = R"SQL(
, stats AS (
  SELECT o.tier, count(*) AS retries,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY o.off_ms) AS p50,
         percentile_cont(0.9) WITHIN GROUP (ORDER BY o.off_ms) AS p90,
         percentile_cont(0.99) WITHIN GROUP (ORDER BY o.off_ms) AS p99,
         percentile_cont(0.999) WITHIN GROUP (ORDER BY o.off_ms) AS p999,
         max(o.off_ms) AS pmax@COUNTS@
    FROM offsets o GROUP BY o.tier
), ops AS (
  SELECT e.tier, count(*) AS operations
    FROM idem.events e
   WHERE e.at >= now() - $1::interval AND e.outcome = $4::text
     AND ($2::text IS NULL OR e.tier = $2::text) AND e.service = $5::text
   GROUP BY e.tier
)
SELECT coalesce(s.tier, p.tier) AS tier, coalesce(p.operations, 0) AS operations,
       coalesce(s.retries, 0) AS retries, s.p50, s.p90, s.p99, s.p999, s.pmax@COLUMNS@
  FROM stats s FULL JOIN ops p ON p.tier = s.tier
)SQL";

// kStatsSelect with its counts: the statement's text depends on the outcome table alone.
const std::string& statsSelect() {
  static const std::string sql = [] {
    std::string counts, columns;
    for (std::size_t i = 1; i <= retryOutcomes().size(); ++i) {
      const std::string n = "n_" + std::to_string(i);
      counts += ",\n         count(*) FILTER (WHERE o.outcome = ($3::text[])[" + std::to_string(i) + "]) AS " + n;
      columns += ", s." + n;
    }
    std::string text = kStatsSelect;
    text.replace(text.find("@COUNTS@"), 8, counts);
    text.replace(text.find("@COLUMNS@"), 9, columns);
    return text;
  }();
  return sql;
}

// width_bucket against the ascending TTLs ($4) puts an offset in bucket i when ttl[i] <= offset <
// ttl[i+1]; "at or after ttl[j]" is then every bucket >= j: one pass over the offsets.
constexpr const char* kLateSelect = R"SQL(
, buckets AS (
  SELECT o.tier, width_bucket(o.off_ms, $4::float8[]) AS b, count(*) AS n FROM offsets o GROUP BY 1, 2
)
SELECT t.tier, g.i::integer AS i, coalesce(sum(bk.n), 0)::bigint AS late
  FROM (SELECT DISTINCT bt.tier FROM buckets bt) t
 CROSS JOIN unnest($4::float8[]) WITH ORDINALITY AS g(ttl_ms, i)
  LEFT JOIN buckets bk ON bk.tier = t.tier AND bk.b >= g.i
 GROUP BY t.tier, g.i ORDER BY t.tier, g.i
)SQL";

constexpr const char* kSizesSql = R"SQL(
SELECT pg_total_relation_size('idem.keys'::regclass)::float8 AS keys_bytes,
       pg_total_relation_size('idem.key_archive'::regclass)::float8 AS archive_bytes,
       (SELECT c.reltuples FROM pg_class c WHERE c.oid = 'idem.keys'::regclass)::float8 AS keys_est,
       (SELECT c.reltuples FROM pg_class c WHERE c.oid = 'idem.key_archive'::regclass)::float8 AS archive_est,
       (extract(epoch FROM now()) * 1000)::bigint AS now_ms
)SQL";

// pg_column_size of the whole row measures what each tier's rows hold (bodies included);
// the table's real size is then shared out in that proportion.
constexpr const char* kRowSampleSql = R"SQL(
SELECT 'live' AS part, k.service, k.tier, count(*)::float8 AS n, sum(pg_column_size(k.*))::float8 AS datum,
       coalesce(sum(pg_column_size(k.resp_body)), 0)::float8 AS body_datum
  FROM idem.keys k TABLESAMPLE SYSTEM ($1::real) REPEATABLE (5)
 GROUP BY k.service, k.tier
UNION ALL
SELECT 'archive' AS part, a.service, a.tier, count(*)::float8 AS n, sum(pg_column_size(a.*))::float8 AS datum,
       coalesce(sum(pg_column_size(a.resp_body)), 0)::float8 AS body_datum
  FROM idem.key_archive a TABLESAMPLE SYSTEM ($2::real) REPEATABLE (5)
 GROUP BY a.service, a.tier
)SQL";

// The stored bodies of the same archive sample (REPEATABLE: the same blocks), counted for each
// age they were archived within: what each body retention of the ladder would keep.
constexpr const char* kBodyAgesSql = R"SQL(
SELECT a.tier, c.i, coalesce(sum(pg_column_size(a.resp_body)), 0)::float8 AS body_datum
  FROM idem.key_archive a TABLESAMPLE SYSTEM ($1::real) REPEATABLE (5)
  JOIN unnest($2::float8[]) WITH ORDINALITY AS c(ms, i) ON a.archived_at >= now() - c.ms * interval '1 millisecond'
 WHERE a.resp_body IS NOT NULL AND a.service = $3::text
 GROUP BY a.tier, c.i
)SQL";

// Tables up to this many rows are read whole; beyond, a block sample of about this many rows.
constexpr double kSampleRows = 200'000;

std::string samplePercent(double estimatedRows) {
  double pct = estimatedRows > kSampleRows ? 100.0 * kSampleRows / estimatedRows : 100.0;
  pct = std::clamp(pct, 0.01, 100.0);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", pct);
  return buf;
}

double percentOf(const std::string& text) { return std::stod(text); }

std::string floatArray(const std::vector<Millis>& ttls) {
  std::string out = "{";
  for (std::size_t i = 0; i < ttls.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(ttls[i].count());
  }
  return out + "}";
}

pg::Param tierParam(const std::string* tier) { return tier ? pg::Param(*tier) : pg::Param::null(); }

// A text[] literal of names that need no quoting (trace outcomes: lower case and underscores).
std::string retryOutcomesParam() {
  std::string out = "{";
  for (const auto& name : retryOutcomes()) out += (out.size() > 1 ? "," : "") + name;
  return out + "}";
}

}  // namespace

std::map<std::string, RetryStats> retryStats(pg::Connection& conn, const std::string& service, Millis since) {
  auto r = conn.exec(std::string(kOffsetsCte) + statsSelect(),
                     {policy::toInterval(since), pg::Param::null(), retryOutcomesParam(),
                      std::string(trace::sqlName(trace::Outcome::Executed)), service});
  std::map<std::string, RetryStats> out;
  for (int i = 0; i < r.rows(); ++i) {
    RetryStats s;
    s.operations = r.integer(i, "operations");
    s.retries = r.integer(i, "retries");
    for (std::size_t o = 0; o < retryOutcomes().size(); ++o) {
      const std::string column = "n_" + std::to_string(o + 1);
      s.byOutcome[retryOutcomes()[o]] = r.isNull(i, r.column(column.c_str())) ? 0 : r.integer(i, column.c_str());
    }
    if (s.retries > 0) {
      s.offsets = Offsets{r.real(i, "p50"), r.real(i, "p90"), r.real(i, "p99"), r.real(i, "p999"),
                          r.real(i, "pmax")};
    }
    out[r.str(i, "tier")] = std::move(s);
  }
  return out;
}

std::map<std::string, std::vector<long long>> lateCounts(pg::Connection& conn, const std::string& service,
                                                        const std::string* tier, Millis since,
                                                        const std::vector<Millis>& ttls) {
  std::map<std::string, std::vector<long long>> late;
  if (ttls.empty()) return late;
  auto r = conn.exec(std::string(kOffsetsCte) + kLateSelect,
                     {policy::toInterval(since), tierParam(tier), retryOutcomesParam(), floatArray(ttls), service});
  for (int i = 0; i < r.rows(); ++i) {
    auto& counts = late.try_emplace(r.str(i, "tier"), ttls.size(), 0).first->second;
    const auto index = static_cast<std::size_t>(r.integer(i, "i") - 1);
    if (index < counts.size()) counts[index] = r.integer(i, "late");
  }
  return late;
}

TableSizes tableSizes(pg::Connection& conn) {
  auto r = conn.exec(kSizesSql);
  TableSizes s;
  s.keysBytes = r.real(0, "keys_bytes");
  s.archiveBytes = r.real(0, "archive_bytes");
  s.keysEstimatedRows = r.real(0, "keys_est");
  s.archiveEstimatedRows = r.real(0, "archive_est");
  s.nowMs = r.integer(0, "now_ms");
  return s;
}

TierStorage storageByTier(pg::Connection& conn, const std::string& service, const TableSizes& sizes) {
  const std::string livePct = samplePercent(sizes.keysEstimatedRows);
  const std::string archivePct = samplePercent(sizes.archiveEstimatedRows);
  auto r = conn.exec(kRowSampleSql, {livePct, archivePct});

  struct Part {
    double rows = 0, datum = 0, bodyDatum = 0;
  };
  std::map<std::string, Part> live, archive;
  Part liveTotal, archiveTotal;  // every service's: the tables' bytes are shared out among all rows
  for (int i = 0; i < r.rows(); ++i) {
    const bool isLive = r.str(i, "part") == "live";
    Part p;
    p.rows = r.real(i, "n");
    p.datum = r.real(i, "datum");
    p.bodyDatum = r.real(i, "body_datum");
    Part& total = isLive ? liveTotal : archiveTotal;
    total.rows += p.rows;
    total.datum += p.datum;
    if (r.str(i, "service") == service) (isLive ? live : archive)[r.str(i, "tier")] = p;
  }
  const double liveScale = 100.0 / percentOf(livePct);
  const double archiveScale = 100.0 / percentOf(archivePct);
  const double tableAvg = liveTotal.rows > 0 ? sizes.keysBytes / (liveTotal.rows * liveScale) : 0;

  TierStorage result;
  result.tableAvgRowBytes = tableAvg;
  auto& out = result.tiers;
  for (const auto& [tier, p] : live) {
    Storage& s = out[tier];
    s.liveRows = p.rows * liveScale;
    s.liveBytes = liveTotal.datum > 0 ? sizes.keysBytes * p.datum / liveTotal.datum : 0;
    s.sampled = liveScale > 1.0;
  }
  for (const auto& [tier, p] : archive) {
    Storage& s = out[tier];
    s.archiveRows = p.rows * archiveScale;
    s.archiveBytes = archiveTotal.datum > 0 ? sizes.archiveBytes * p.datum / archiveTotal.datum : 0;
    s.archiveBodyBytes = archiveTotal.datum > 0 ? sizes.archiveBytes * p.bodyDatum / archiveTotal.datum : 0;
    s.sampled = s.sampled || archiveScale > 1.0;
  }
  const auto& ages = bodyRetentionLadder();
  for (auto& [tier, s] : out)
    for (Millis age : ages) s.archiveBodyBytesWithin.emplace_back(age, 0.0);
  if (archiveTotal.datum > 0) {
    auto b = conn.exec(kBodyAgesSql, {archivePct, floatArray(ages), service});
    for (int i = 0; i < b.rows(); ++i) {
      auto found = out.find(b.str(i, "tier"));
      const auto index = static_cast<std::size_t>(b.integer(i, "i") - 1);
      if (found == out.end() || index >= ages.size()) continue;
      found->second.archiveBodyBytesWithin[index].second =
          sizes.archiveBytes * b.real(i, "body_datum") / archiveTotal.datum;
    }
  }
  for (auto& [tier, s] : out) s.avgRowBytes = s.liveRows > 0 ? s.liveBytes / s.liveRows : tableAvg;
  return result;
}

}  // namespace idem::tiers::internal
