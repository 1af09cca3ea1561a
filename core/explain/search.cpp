#include "core/explain/search.h"

#include <cctype>

namespace idem::explain {
namespace {

// $1 the text, $2 the limit (NULL: none), $3 match keys, $4 match resource ids. libpq's unnamed
// statements are planned with the values known, so a switched-off branch costs nothing.
constexpr const char* kExactSql = R"sql(
SELECT * FROM (
  SELECT tenant, endpoint, idem_key, service, generation, false AS archived,
         coalesce(resource_ref, '') AS resource_ref, coalesce(resource_ref = $1, false) AS by_resource
    FROM idem.keys WHERE ($4::bool AND resource_ref = $1) OR ($3::bool AND idem_key = $1)
  UNION ALL
  SELECT tenant, endpoint, idem_key, service, generation, true, coalesce(resource_ref, ''),
         coalesce(resource_ref = $1, false)
    FROM idem.key_archive WHERE ($4::bool AND resource_ref = $1) OR ($3::bool AND idem_key = $1)) h
ORDER BY archived, tenant, endpoint, idem_key, service, generation DESC
LIMIT $2)sql";

// $1 a LIKE prefix pattern; otherwise as above.
constexpr const char* kPrefixSql = R"sql(
SELECT * FROM (
  SELECT tenant, endpoint, idem_key, service, generation, false AS archived, coalesce(resource_ref, '') AS resource_ref
    FROM idem.keys WHERE ($3::bool AND idem_key LIKE $1) OR ($4::bool AND resource_ref LIKE $1)
  UNION ALL
  SELECT tenant, endpoint, idem_key, service, generation, true, coalesce(resource_ref, '')
    FROM idem.key_archive WHERE ($3::bool AND idem_key LIKE $1) OR ($4::bool AND resource_ref LIKE $1)) h
ORDER BY archived, idem_key, tenant, endpoint, service, generation DESC
LIMIT $2)sql";

bool blank(std::string_view s) {
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

std::string likePrefixPattern(std::string_view prefix) {
  std::string out;
  for (char c : prefix) {
    if (c == '\\' || c == '%' || c == '_') out += '\\';
    out += c;
  }
  return out + '%';
}

std::vector<KeyMatch> searchKeys(pg::Connection& conn, std::string_view text, const SearchOptions& options) {
  std::vector<KeyMatch> out;
  if (blank(text) || (!options.byKey && !options.byResource)) return out;
  const pg::Param limit = options.limit > 0 ? pg::Param(options.limit) : pg::Param::null();
  const std::string byKey = options.byKey ? "true" : "false";
  const std::string byResource = options.byResource ? "true" : "false";
  auto collect = [&](const pg::Result& r, bool exact) {
    for (int i = 0; i < r.rows(); ++i) {
      KeyMatch m;
      m.ref = KeyRef{Scope{r.str(i, "tenant"), r.str(i, "endpoint"), r.str(i, "service")}, r.str(i, "idem_key")};
      m.generation = static_cast<int>(r.integer(i, "generation"));
      m.archived = r.boolean(i, "archived");
      m.resourceRef = r.str(i, "resource_ref");
      m.by = !exact ? KeyMatch::By::Prefix : r.boolean(i, "by_resource") ? KeyMatch::By::Resource : KeyMatch::By::Key;
      out.push_back(std::move(m));
    }
  };
  const std::string exact(text);
  collect(conn.exec(kExactSql, {exact, limit, byKey, byResource}), true);
  if (!out.empty() || !options.prefix) return out;
  collect(conn.exec(kPrefixSql, {likePrefixPattern(text), limit, byKey, byResource}), false);
  return out;
}

}  // namespace idem::explain
