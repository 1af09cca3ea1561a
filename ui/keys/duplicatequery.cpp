#include "ui/keys/duplicatequery.h"

#include "ui/common/timefmt.h"
#include "ui/keys/filterparams.h"

namespace idem::ui {
namespace {

// Each key's generation as the explanation picks it (core/explain/loader.cpp): the later key's
// the row names, the earlier key's latest claimed by the time of the repeat.
constexpr const char* kPairsSql = R"sql(
SELECT e.id, e.at::text AS at_text, extract(epoch FROM e.at)::text AS at_epoch, e.tenant, e.endpoint, e.service,
       e.idem_key, e.related_key, e.outcome, coalesce(e.detail, '') AS detail,
       coalesce(l.resource_ref, '') AS later_resource, coalesce(f.resource_ref, '') AS earlier_resource,
       extract(epoch FROM f.created_at)::text AS earlier_at
  FROM idem.events e
  LEFT JOIN LATERAL (
        SELECT g.resource_ref FROM (
          SELECT generation, resource_ref FROM idem.keys k
           WHERE k.tenant = e.tenant AND k.endpoint = e.endpoint AND k.idem_key = e.idem_key AND k.service = e.service
          UNION ALL
          SELECT generation, resource_ref FROM idem.key_archive a
           WHERE a.tenant = e.tenant AND a.endpoint = e.endpoint AND a.idem_key = e.idem_key AND a.service = e.service) g
         WHERE g.generation = e.generation LIMIT 1) l ON true
  LEFT JOIN LATERAL (
        SELECT g.resource_ref, g.created_at FROM (
          SELECT created_at, resource_ref FROM idem.keys k
           WHERE k.tenant = e.tenant AND k.endpoint = e.endpoint AND k.idem_key = e.related_key AND k.service = e.service
          UNION ALL
          SELECT created_at, resource_ref FROM idem.key_archive a
           WHERE a.tenant = e.tenant AND a.endpoint = e.endpoint AND a.idem_key = e.related_key AND a.service = e.service) g
         WHERE g.created_at <= e.at ORDER BY g.created_at DESC LIMIT 1) f ON true
 WHERE e.related_key IS NOT NULL
   AND ($2::text IS NULL OR e.endpoint = $2)
   AND ($3::text IS NULL OR e.tier = $3)
   AND ($4::text IS NULL OR e.tenant = $4)
   AND ($5::timestamptz IS NULL OR e.at >= $5)
   AND ($6::timestamptz IS NULL OR e.at < $6)
   AND ($7::text IS NULL OR e.idem_key = $7 OR e.related_key = $7)
   AND ($8::text IS NULL OR e.service = $8)
   AND ($9::timestamptz IS NULL OR (e.at, e.id) < ($9, $10::bigint))
 ORDER BY e.at DESC, e.id DESC
 LIMIT $1
)sql";

QString col(const pg::Result& r, int row, const char* name) { return QString::fromUtf8(r.text(row, r.column(name))); }

}  // namespace

std::optional<qint64> DuplicatePair::gapMs() const {
  if (!earlierAt.isValid() || !at.isValid()) return std::nullopt;
  return earlierAt.msecsTo(at);
}

std::vector<DuplicatePair> fetchDuplicatePage(pg::Connection& conn, const KeyFilter& f,
                                              const std::optional<DuplicatePair>& after, int limit) {
  auto r = conn.exec(kPairsSql, {limit, optText(f.endpoint), optText(f.tier), optText(f.tenant),
                                 optTime(f.createdFrom), optTime(f.createdTo), optText(f.key), optText(f.service),
                                 after ? pg::Param(after->atText) : pg::Param::null(),
                                 after ? pg::Param(static_cast<long long>(after->eventId)) : pg::Param::null()});
  std::vector<DuplicatePair> out;
  out.reserve(static_cast<std::size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) {
    DuplicatePair p;
    p.eventId = r.integer(i, "id");
    p.atText = r.str(i, "at_text");
    p.at = fromEpochText(r.text(i, r.column("at_epoch")));
    p.tenant = col(r, i, "tenant");
    p.endpoint = col(r, i, "endpoint");
    p.service = col(r, i, "service");
    p.key = col(r, i, "idem_key");
    p.earlierKey = col(r, i, "related_key");
    p.outcome = col(r, i, "outcome");
    p.detail = col(r, i, "detail");
    p.laterResource = col(r, i, "later_resource");
    p.earlierResource = col(r, i, "earlier_resource");
    p.earlierAt = fromEpochText(r.text(i, r.column("earlier_at")));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace idem::ui
